/**
 * Operation variables: named values a caller gives at start (`--var name=value`, the client's `variables`, the
 * MCP `start_operation` tool) that an adapter's request templates expand (`{scope}`, `{+scope}`). The adapter
 * declares each one (type, pattern, whether `/` may stay, required or default); this module holds the grammar of
 * both sides and the check of one against the other. Variables are recorded in workflow history and the store,
 * so they never carry secrets. Pure: safe in workflow code.
 */
import { z } from 'zod';
import { lazySchema } from './lazy-schema';

/** A variable's name: a lower-case letter, then up to 39 letters, digits or `_`. */
const VARIABLE_NAME_PATTERN = /^[a-z][A-Za-z0-9_]{0,39}$/;

/**
 * The names every request template already has (job ID, token, client reference, operation ID, poll URL, paging
 * token, the create payload); a declared or given variable never takes one of them.
 */
export const BUILT_IN_VARIABLE_NAMES = [
  'jobId',
  'token',
  'clientReference',
  'operationId',
  'pollUrl',
  'nextToken',
  'payload',
] as const;

/** The most variables one start request may give, and one adapter may declare. */
export const MAX_VARIABLES = 50;
/** The longest value a start request may give, in UTF-16 code units (values are carried in workflow history). */
export const MAX_VARIABLE_VALUE_CHARS = 2000;
/** A declaration's `maxLength` when it names none. */
const DEFAULT_VARIABLE_MAX_LENGTH = 500;

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators: never in a value. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** An integer as text: no sign but `-`, no leading zero, no `-0`. */
const INTEGER_TEXT = /^(?:0|-?[1-9][0-9]*)$/;

/** Why a name cannot be a variable's, or undefined when it can. */
function nameProblem(name: string): string | undefined {
  if ((BUILT_IN_VARIABLE_NAMES as readonly string[]).includes(name))
    return `'${name}' is a built-in name (${BUILT_IN_VARIABLE_NAMES.join(', ')}), not a variable's`;
  if (!VARIABLE_NAME_PATTERN.test(name))
    return `'${name}' is not a variable name: a lower-case letter, then up to 39 letters, digits or '_'`;
  return undefined;
}

/**
 * A record schema that also refuses an own `__proto__` key (JSON.parse makes one; a zod record skips it
 * silently), so such a name is refused as a bad name rather than dropped unseen.
 */
function withoutProtoKey<T extends z.ZodType>(schema: T) {
  return z.preprocess((raw, ctx) => {
    if (typeof raw === 'object' && raw !== null && Object.hasOwn(raw, '__proto__'))
      ctx.addIssue({ code: 'custom', path: ['__proto__'], message: nameProblem('__proto__')! });
    return raw;
  }, schema);
}

/** A declared pattern as the regular expression that must match a whole value; throws when it does not compile. */
function wholeValueRegex(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`);
}

function compileProblem(pattern: string): string | undefined {
  try {
    wholeValueRegex(pattern);
    return undefined;
  } catch (error) {
    return `does not compile as a regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** One variable as an adapter declares it (`variables.<name>` in the provider document). */
const variableDeclarationSchema = lazySchema(() =>
  z
    .object({
      /** What the value is, for `explain` and the caller. */
      description: z.string().max(500).optional(),
      /** `integer` values are whole numbers written in decimal, and a JSON body template gets them as numbers. */
      type: z.enum(['string', 'integer']).default('string'),
      /** A regular expression the whole value must match (anchored at both ends whether written so or not). */
      pattern: z
        .string()
        .min(1)
        .max(1000)
        .superRefine((pattern, ctx) => {
          const problem = compileProblem(pattern);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
      /** The longest value accepted, in UTF-16 code units. */
      maxLength: z.number().int().min(1).max(MAX_VARIABLE_VALUE_CHARS).default(DEFAULT_VARIABLE_MAX_LENGTH),
      /** Only a reserved variable may hold `/` (kept by a `{+name}` expansion); any other refuses a value with one. */
      reserved: z.boolean().default(false),
      /** The caller must give a value. */
      required: z.literal(true).optional(),
      /** The value used when the caller gives none; it must pass the declaration's own checks. */
      default: z.string().optional(),
    })
    .strict()
    .superRefine((declaration, ctx) => {
      if (declaration.required === true && declaration.default !== undefined)
        ctx.addIssue({ code: 'custom', path: ['default'], message: 'a required variable has no default' });
      if (declaration.default === undefined) return;
      for (const message of valueProblems(declaration, declaration.default))
        ctx.addIssue({ code: 'custom', path: ['default'], message: `the default ${message}` });
    }),
);
/** One variable's declaration, with its defaults filled in. */
type VariableDeclaration = z.infer<typeof variableDeclarationSchema>;

/** An adapter's `variables:` block: name to declaration, at most {@link MAX_VARIABLES}. */
export const variableDeclarationsSchema = lazySchema(() =>
  withoutProtoKey(
    z.record(z.string(), variableDeclarationSchema).superRefine((declarations, ctx) => {
      const names = Object.keys(declarations);
      if (names.length > MAX_VARIABLES)
        ctx.addIssue({ code: 'custom', message: `${names.length} variables declared, at most ${MAX_VARIABLES}` });
      for (const name of names) {
        const problem = nameProblem(name);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: problem });
      }
    }),
  ),
);
/** An adapter's declared variables, with their defaults filled in. */
export type VariableDeclarations = z.infer<typeof variableDeclarationsSchema>;

/** Variables as a caller gives them, or as recorded: name to value, always text. */
export type OperationVariables = Record<string, string>;

/**
 * The start request's `variables`: at most {@link MAX_VARIABLES}, each name a variable name (never a built-in
 * one), each value a single line of at most {@link MAX_VARIABLE_VALUE_CHARS} characters with no control
 * character. Checked before anything exists, whatever the adapter declares.
 */
export const startVariablesSchema = lazySchema(() => withoutProtoKey(variablesRecordSchema()));

function variablesRecordSchema() {
  return z.record(z.string(), z.string()).superRefine((variables, ctx) => {
    const names = Object.keys(variables);
    if (names.length > MAX_VARIABLES)
      ctx.addIssue({ code: 'custom', message: `${names.length} variables given, at most ${MAX_VARIABLES}` });
    for (const name of names) {
      const problem = nameProblem(name);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: problem });
      const value = variables[name]!;
      if (value.length > MAX_VARIABLE_VALUE_CHARS)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `${value.length} characters, at most ${MAX_VARIABLE_VALUE_CHARS}`,
        });
      if (CONTROL_CHARACTER.test(value))
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'must be one line with no control character (no newline, tab or NUL)',
        });
    }
  });
}

/** One problem with one variable: `variables.<name>` (or `variables` for the set) and why. */
export interface VariableIssue {
  path: string;
  message: string;
}

/** The result of {@link checkOperationVariables}. */
export type VariableCheck = { ok: true; values: OperationVariables } | { ok: false; issues: VariableIssue[] };

/** What is wrong with a value against its declaration (length, type, pattern, slash), each as a phrase. */
function valueProblems(declaration: VariableDeclaration, value: string): string[] {
  const problems: string[] = [];
  if (value.length > declaration.maxLength)
    problems.push(`is ${value.length} characters long, at most ${declaration.maxLength}`);
  if (declaration.type === 'integer' && !(INTEGER_TEXT.test(value) && Number.isSafeInteger(Number(value))))
    problems.push('must be an integer (decimal digits, an optional leading -, at most 2^53 - 1)');
  if (declaration.pattern !== undefined && compileProblem(declaration.pattern) === undefined) {
    if (!wholeValueRegex(declaration.pattern).test(value))
      problems.push(`does not match the pattern ${declaration.pattern}`);
  }
  if (!declaration.reserved && value.includes('/'))
    problems.push("contains '/', which only a variable declared reserved: true may hold");
  return problems;
}

/**
 * Checks the variables a caller gave against the adapter's declarations: every given name declared, every
 * required one given, every value of the declared type, length and pattern, and `/` only in a reserved
 * variable. Returns the values with defaults applied (a declared variable neither given nor defaulted stays
 * absent), or every problem at once, each naming `variables.<name>`. `declared` absent means the adapter
 * declares none. Pure and deterministic: the client and the workflow run the same check.
 */
export function checkOperationVariables(
  declared: VariableDeclarations | undefined,
  given: OperationVariables | undefined,
): VariableCheck {
  const declarations = declared ?? {};
  const supplied = given ?? {};
  const declaredNames = Object.keys(declarations).sort();
  const issues: VariableIssue[] = [];
  const values: OperationVariables = {};
  for (const name of Object.keys(supplied).sort()) {
    if (!Object.hasOwn(declarations, name))
      issues.push({
        path: `variables.${name}`,
        message:
          declaredNames.length === 0
            ? 'not declared: the adapter declares no variables'
            : `not declared: the adapter declares ${declaredNames.join(', ')}`,
      });
  }
  for (const name of declaredNames) {
    const declaration = declarations[name]!;
    const value = Object.hasOwn(supplied, name) ? supplied[name] : declaration.default;
    if (value === undefined) {
      if (declaration.required === true)
        issues.push({ path: `variables.${name}`, message: 'required by the adapter and not given' });
      continue;
    }
    for (const message of valueProblems(declaration, value)) issues.push({ path: `variables.${name}`, message });
    values[name] = value;
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, values };
}
