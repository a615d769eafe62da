// Hash routes (#/sessions, #/sessions/alice/events, …): the console is one
// page, so reloading or bookmarking any view works without server routes.

/** The current hash path split into segments: `#/sessions/a` → ['sessions', 'a']. */
export function segments() {
  return location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
}

/** Navigates to `#/<parts joined>`. */
export function go(...parts) {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** The href of a route. */
export function href(...parts) {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}
