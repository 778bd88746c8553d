// scenarios/scenario.schema.json comes from the zod schema, so editors check exactly what the
// runner accepts. `npm run gen:schema` rewrites it; a unit test fails when it is stale.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../util/index.js';
import { scenarioSchema } from './schema.js';

export const SCENARIO_JSON_SCHEMA_PATH = join(PROJECT_ROOT, 'scenarios', 'scenario.schema.json');

/** The JSON Schema of scenario files (input side: units as written, defaults shown). */
export function scenarioJsonSchema(): Record<string, unknown> {
  // Durations and sizes are transforms ("30s" → ms); the input side describes what a file may contain.
  const schema = z.toJSONSchema(scenarioSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...schema, $id: 'https://github.com/attestorm/attestorm/scenarios/scenario.schema.json', title: 'attestorm scenario' };
}

export function scenarioJsonSchemaText(): string {
  return `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`;
}

export function writeScenarioJsonSchema(path = SCENARIO_JSON_SCHEMA_PATH): string {
  writeFileSync(path, scenarioJsonSchemaText());
  return path;
}
