// How wide the console is, and text wrapped to it: the run's closing table and notes must fit an
// 80-column terminal, and a log file or CI console (not a TTY) is read as one.

/** The narrowest console the output is laid out for, and the width assumed when nothing says otherwise. */
export const MIN_COLUMNS = 80;

/**
 * Columns to lay text out in: COLUMNS when set (the user's word wins), else the stream's own width
 * when it is a TTY, else 80; never fewer than 80.
 */
export function terminalColumns(stream: { isTTY?: boolean; columns?: number } | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = Number(env['COLUMNS']);
  if (env['COLUMNS'] !== undefined && Number.isInteger(fromEnv) && fromEnv > 0) return Math.max(MIN_COLUMNS, fromEnv);
  if (stream?.isTTY && typeof stream.columns === 'number' && stream.columns > 0) return Math.max(MIN_COLUMNS, stream.columns);
  return MIN_COLUMNS;
}

/**
 * `text` broken at spaces into lines of at most `width` characters, the first starting with
 * `indent`, the rest with `hang`; a word longer than a line (a path) is cut where it must be.
 */
export function wrapText(text: string, width: number, indent = '', hang = indent): string[] {
  const lines: string[] = [];
  let line = indent;
  let empty = true;
  const push = () => {
    lines.push(line.trimEnd());
    line = hang;
    empty = true;
  };
  for (const word of text.split(/ +/).filter(Boolean)) {
    let rest = word;
    if (!empty && line.length + 1 + rest.length > width) push();
    while ((empty ? line.length : line.length + 1) + rest.length > width) {
      const room = width - line.length - (empty ? 0 : 1);
      if (room <= 0) {
        push();
        continue;
      }
      line += `${empty ? '' : ' '}${rest.slice(0, room)}`;
      rest = rest.slice(room);
      push();
    }
    if (rest) {
      line += `${empty ? '' : ' '}${rest}`;
      empty = false;
    }
  }
  if (!empty || lines.length === 0) lines.push(line.trimEnd());
  return lines;
}
