// Escaping for everything the HTML report puts on the page: run data comes from files anyone can
// edit (scenario names, expectation messages, commands), so none of it may become markup or script.

export function escapeHtml(text: unknown): string {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * JSON that is safe inside <script type="application/json">: "<" is written as \u003c so that
 * neither "</script>" nor "<!--" can end or confuse the element; U+2028/2029 are escaped for older
 * parsers. JSON.parse reads the result back unchanged.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A third-party script inlined into a <script> element must not contain "</script". */
export function scriptForInline(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1');
}
