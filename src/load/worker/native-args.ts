// The native worker's command line: the WorkerConfig a Node worker reads as JSON, as key=value
// arguments the C program parses without a JSON reader. Pure, so it can be tested alone.
import type { WorkerConfig } from './messages.js';

export function nativeWorkerArgs(w: WorkerConfig): string[] {
  const args = [
    `socket=${w.socket}`,
    `connection=${w.connection}`,
    `rate=${w.rate ?? 0}`,
    `deadlineMs=${w.deadlineMs}`,
    `retry=${w.retry}`,
    `audience=${w.audience}`,
    `maxCalls=${w.maxCalls ?? -1}`,
  ];
  for (const [method, weight] of w.methods) args.push(`method=${method}:${weight}`);
  return args;
}
