// Periodic refreshes that never overlap and stop when the page is left.

/**
 * Runs `fn` now and then `ms` after each run ends, until the returned stop
 * function is called. A failing run does not stop the loop.
 */
export function every(ms, fn) {
  let stopped = false;
  let timer = null;
  const tick = async () => {
    if (stopped) return;
    try {
      await fn();
    } catch (e) {
      console.warn('refresh failed', e);
    } finally {
      if (!stopped) timer = setTimeout(tick, ms);
    }
  };
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
