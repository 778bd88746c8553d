// `--wide` of `run`, `stability` and `sweep`, which all close each run with the comparison table:
// declared once so that the three say the same.
export const wideOption = {
  type: 'boolean',
  default: false,
  describe:
    'Every column of the end-of-run table (agent, limit, restarts, offered and answered calls, latency, each outcome, expectations); lines may then be wider than the terminal. Default: the essential columns, fitted to the terminal (COLUMNS, else its width, else 80)',
} as const;
