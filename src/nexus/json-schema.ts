/**
 * The JSON Schemas of the `asyncjob` Nexus service (draft 2020-12), one file per operation's input and output in
 * `schema/nexus/`, generated from the zod schemas the handler validates with (`schemas.ts`) by `npm run schema`,
 * so callers in Go, Java or Python type the same inputs and outputs. What only the handler checks (zod refinements
 * have no JSON Schema form): the poll policy's bounds, the payload's size as canonical JSON, the deadlines' order
 * and that they are in the future, the identity grammar, and that `startedBy`/`requestedBy` name the calling
 * workflow when the request comes from one.
 */
import { z } from 'zod';
import { pollPolicySchema } from '../core/policy';
import { NEXUS_SCHEMAS } from './schemas';
import { ASYNCJOB_SERVICE_NAME } from './service';

type Json = Record<string, unknown>;

/** The directory of the files, relative to the repository's root. */
export const NEXUS_SCHEMA_DIR = 'schema/nexus';

/** The fields that hold an identity given by a caller, parsed to its canonical form by the handler. */
const IDENTITY_FIELDS = ['startedBy', 'authorisedBy', 'requestedBy'];

/** An identity as JSON Schema can say it: text of at most 200 characters (docs/nexus.md, "Identity"). */
const IDENTITY: Json = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description:
    'an identity: an e-mail address, agent:NAME, service:NAME, policy:NAME or workflow:NAMESPACE/WORKFLOW_ID; folded to its canonical form',
};

/** One schema as JSON, `io` its input or output form, with the `$id` callers may cite. */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output', file: string): Json {
  const { $schema, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  const properties = json.properties as Record<string, Json> | undefined;
  if (properties !== undefined) {
    // An identity's parser is a transform, which JSON Schema cannot say (it comes out as "anything").
    for (const field of IDENTITY_FIELDS) if (field in properties) properties[field] = IDENTITY;
    // The start request's policy is a record checked against the core poll policy: publish the policy's own shape.
    if (properties.policy !== undefined) {
      const { $schema: _policyMeta, ...policy } = z.toJSONSchema(pollPolicySchema, { io: 'input' }) as Json;
      properties.policy = policy;
    }
  }
  return { $schema, $id: `https://asyncjob.dev/${NEXUS_SCHEMA_DIR}/${file}`, ...json };
}

/** Every file of `schema/nexus/`: `<operation>.input.schema.json` and `<operation>.output.schema.json`. Pure. */
export function nexusJsonSchemas(): Record<string, Json> {
  const files: Record<string, Json> = {};
  for (const [operation, { input, output }] of Object.entries(NEXUS_SCHEMAS)) {
    const inputFile = `${operation}.input.schema.json`;
    const outputFile = `${operation}.output.schema.json`;
    files[inputFile] = {
      ...jsonSchemaOf(input, 'input', inputFile),
      title: `${ASYNCJOB_SERVICE_NAME}.${operation} input`,
    };
    files[outputFile] = {
      ...jsonSchemaOf(output, 'output', outputFile),
      title: `${ASYNCJOB_SERVICE_NAME}.${operation} output`,
    };
  }
  return files;
}

/** A file's text: indented JSON with a final newline. */
export function renderNexusSchema(schema: Json): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
