// C0, DEL and C1 (NEL, U+0085, among them), the Unicode line and paragraph separators, and the invisible format
// characters (bidi overrides among them): the characters a terminal may act on instead of showing (clear the
// screen, set the window title, write the clipboard, hide what follows), that start a line where a reader
// expects none, or that reorder what is shown.
const CONTROLS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text from outside (an event's id or type, an error's message, an endpoint's answer) made safe to print on a
 * terminal or in a log line: every control character becomes its JSON escape (`\n`, `\u001b`), so it is shown and
 * never acted on. The escapes are valid inside a JSON string, so a JSON-quoted value stays JSON.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (char) => SHORT[char] ?? escapeUnits(char));
}

/** Each UTF-16 unit of the character as a \u escape (a character past U+FFFF as its surrogate pair). */
function escapeUnits(char: string): string {
  let escaped = '';
  for (let i = 0; i < char.length; i++) escaped += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return escaped;
}
