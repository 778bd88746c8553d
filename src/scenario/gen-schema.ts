// `npm run gen:schema`: regenerates scenarios/scenario.schema.json from the zod schema.
import { writeScenarioJsonSchema } from './json-schema.js';

process.stdout.write(`wrote ${writeScenarioJsonSchema()}\n`);
