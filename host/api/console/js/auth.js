// The API token, kept for this browser tab only (sessionStorage): closing
// the tab signs out, and no other site or tab can read it.

const KEY = 'switchboard.token';

/** The signed-in token, or null. */
export function token() {
  return sessionStorage.getItem(KEY);
}

/** Remembers the token for this tab. */
export function signIn(value) {
  sessionStorage.setItem(KEY, value);
}

/** Forgets the token. */
export function signOut() {
  sessionStorage.removeItem(KEY);
}
