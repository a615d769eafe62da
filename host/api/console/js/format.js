// Formatting of times, numbers and identifiers for display.

/** `2026-11-22 09:12:03` in local time, from Unix seconds or an ISO string. */
export function when(value) {
  if (value === null || value === undefined || value === '') return '—';
  const d = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `09:12:03` in local time, from Unix seconds. */
export function clock(unix) {
  return when(unix).slice(11);
}

/** A count with thousands separators. */
export function count(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '—';
}

/** Microseconds as `412 µs` or `3.1 ms`. */
export function micros(us) {
  if (typeof us !== 'number') return '—';
  return us < 1000 ? `${Math.round(us)} µs` : `${(us / 1000).toFixed(1)} ms`;
}

/** Bytes as `12.3 KiB`. */
export function bytes(n) {
  if (typeof n !== 'number') return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Seconds as `42 s` or `5 min 3 s`. */
export function duration(secs) {
  if (typeof secs !== 'number') return '—';
  const s = Math.max(0, Math.round(secs));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** The phone part of a user JID (`4915…@s.whatsapp.net` → `+4915…`), else the JID. */
export function phone(jid) {
  if (!jid) return '—';
  const m = /^(\d+)@s\.whatsapp\.net$/.exec(jid);
  return m ? `+${m[1]}` : jid;
}

/** Human words for a snake_case status. */
export function words(s) {
  return String(s ?? '').replaceAll('_', ' ');
}
