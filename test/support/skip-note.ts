// Checks that only some machines allow are never skipped silently: the part left out and the reason
// are printed (once per line), so a green run on a machine without them says what it did not check.
const said = new Set<string>();

export function skipNote(what: string, reason: string): void {
  const line = `skipped: ${what} (${reason})`;
  if (said.has(line)) return;
  said.add(line);
  console.warn(line);
}
