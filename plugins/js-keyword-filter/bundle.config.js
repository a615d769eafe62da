// Rolldown configuration merged into `jco componentize --bundle`: the
// bundler folds `keywords.js` into `app.js` (ComponentizeJS takes exactly one
// ES module), while the WIT imports (`switchboard:plugin/...`) are provided by
// the host at instantiation, so they stay imports instead of being looked up
// on disk (jco already does this for `wasi:` but not for other packages).
export default {
  external: [/^switchboard:/],
};
