// C0, DEL and C1 (NEL, U+0085, among them), and the Unicode line and paragraph separators: the characters a
// terminal may act on instead of showing (clear the screen, set the window title, write the clipboard, hide
// what follows) or that start a line where a reader expects none.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text from outside (an event's id or type, an error's message, an endpoint's answer) made safe to print on a
 * terminal or in a log line: every control character becomes its JSON escape (`\n`, `\u001b`), so it is shown and
 * never acted on. The escapes are valid inside a JSON string, so a JSON-quoted value stays JSON.
 */
export function escapeControls(text: string): string {
  return text.replace(
    CONTROLS,
    (char) => SHORT[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
