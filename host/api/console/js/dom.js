// Building DOM nodes without innerHTML: every piece of data that reaches the
// page (message texts, push names, error messages) goes in as text, never as
// markup.

/**
 * Creates an element. `attrs` keys: `class`, `text`, `on<event>` handlers,
 * `dataset` (object), boolean attributes as booleans, anything else as an
 * attribute. Children are nodes, strings (as text), arrays, or null/false
 * (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

/** Appends children (nodes, strings, arrays; null and false skipped). */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces every child of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A labelled form field: `<label>` with its text and the control inside. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h('div', { class: 'field' },
    h('label', { for: id, text: label }),
    control,
    hint ? h('p', { class: 'hint', text: hint }) : null);
}

/** A text-like `<input>`. */
export function input(name, attrs = {}) {
  return h('input', { name, type: 'text', autocomplete: 'off', ...attrs });
}

/** A `<select>` of `[value, label]` pairs (or plain strings). */
export function select(name, options, selected, attrs = {}) {
  const el = h('select', { name, ...attrs });
  for (const opt of options) {
    const [value, label] = Array.isArray(opt) ? opt : [opt, opt];
    const o = h('option', { value, text: label });
    if (value === selected) o.selected = true;
    el.append(o);
  }
  return el;
}

/** A `<button type="button">` running `onClick`; disabled while it runs. */
export function button(label, onClick, attrs = {}) {
  const el = h('button', { type: 'button', class: 'btn', ...attrs, text: label });
  el.addEventListener('click', async (e) => {
    if (el.disabled) return;
    el.disabled = true;
    try {
      await onClick(e);
    } finally {
      if (el.isConnected) el.disabled = false;
    }
  });
  return el;
}

/** A form whose submit runs `onSubmit(values, form)`; the submit button is disabled while it runs. */
export function form(attrs, onSubmit, ...children) {
  const el = h('form', attrs, ...children);
  el.addEventListener('submit', async (e) => {
    e.preventDefault();
    const submit = el.querySelector('[type=submit]');
    if (submit) submit.disabled = true;
    try {
      const values = Object.fromEntries(new FormData(el).entries());
      await onSubmit(values, el);
    } finally {
      if (submit) submit.disabled = false;
    }
  });
  return el;
}

/** A table with a header row and one row per item made by `row(item)`. */
export function table(headers, items, row, attrs = {}) {
  return h('div', { class: 'table-wrap' },
    h('table', attrs,
      h('thead', {}, h('tr', {}, headers.map((t) => h('th', { scope: 'col', text: t })))),
      h('tbody', {}, items.map(row))));
}

/** A table cell; `label` is shown before the value on narrow screens. */
export function td(label, ...children) {
  return h('td', { 'data-label': label }, ...children);
}

const shown = new WeakMap();

/**
 * Replaces `el`'s children with `build()` only when `data` differs from
 * what `el` shows, so a refresh that changes nothing keeps focus, scroll
 * and open details where they are.
 */
export function refresh(el, data, build) {
  const key = JSON.stringify(data);
  if (shown.get(el) === key) return;
  shown.set(el, key);
  replace(el, build());
}
