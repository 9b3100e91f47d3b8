/**
 * URL rules of a provider contract (C4): every URL a request goes to is built from the contract's `baseUrl`
 * or read from an answer and then checked to be on the same origin. A URL elsewhere is refused, never followed,
 * so credentials never leave the configured origin. Path templates are RFC 6570 level 3 (`{name}`, `{+name}`,
 * `{?a,b}`, `{&a}`, `{/a}`, `{.a}`, `{;a}`), expanded with the `url-template` package. Pure.
 */
import { parseTemplate } from 'url-template';

/** A resolved URL, or why it was refused. */
export type ResolvedUrl =
  { ok: true; url: string } | { ok: false; errorCategory: 'foreign_origin' | 'invalid_url'; problem: string };

/**
 * Resolves `candidate` (absolute, or relative to `baseUrl` as a browser would) and accepts it only on the origin
 * of `baseUrl`, over http(s), without user info. `what` names the value in the problem text.
 */
export function resolveOnOrigin(baseUrl: string, candidate: string, what: string): ResolvedUrl {
  const base = new URL(baseUrl);
  let url: URL;
  try {
    url = new URL(candidate, base);
  } catch {
    return { ok: false, errorCategory: 'invalid_url', problem: `${what} is not a valid URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      ok: false,
      errorCategory: 'invalid_url',
      problem: `${what} uses the scheme ${url.protocol.slice(0, 20)}, not http(s)`,
    };
  }
  if (url.origin !== base.origin) {
    return {
      ok: false,
      errorCategory: 'foreign_origin',
      problem: `${what} is on another origin (${url.host.slice(0, 200)}), not ${base.host}; it is not followed (C4)`,
    };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, errorCategory: 'invalid_url', problem: `${what} carries user info; it is not followed` };
  }
  url.hash = '';
  return { ok: true, url: url.toString() };
}

/** The RFC 6570 level 3 operators a path template may use (`#` is refused: a fragment is never sent). */
type TemplateOperator = '' | '+' | '.' | '/' | ';' | '?' | '&';

/** One part of a parsed path template: literal text, or an expression naming one or more variables. */
export type TemplatePart =
  { kind: 'literal'; text: string } | { kind: 'expression'; operator: TemplateOperator; names: string[] };

const OPERATORS: ReadonlySet<string> = new Set(['+', '.', '/', ';', '?', '&']);
/** A variable name in a template: a letter or `_`, then letters, digits and `_`. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function parseExpression(body: string): { ok: true; part: TemplatePart } | { ok: false; problem: string } {
  const first = body.charAt(0);
  if (first === '#') return { ok: false, problem: `{${body}}: a fragment is never sent to the provider` };
  if ('=,!@|'.includes(first))
    return { ok: false, problem: `{${body}}: the operator ${first} is reserved by RFC 6570` };
  const operator = (OPERATORS.has(first) ? first : '') as TemplateOperator;
  const names = body.slice(operator.length).split(',');
  for (const name of names) {
    if (/[:*]/.test(name))
      return { ok: false, problem: `{${body}}: prefix (:n) and explode (*) modifiers are not supported (level 3)` };
    if (!VARIABLE_NAME.test(name)) return { ok: false, problem: `{${body}}: "${name}" is not a variable name` };
  }
  return { ok: true, part: { kind: 'expression', operator, names } };
}

/**
 * Parses an RFC 6570 level 3 template into literals and expressions. Refuses an unclosed or stray brace, an
 * empty expression, the fragment operator, level 4 modifiers and names that are not variable names. Pure.
 */
export function parseUrlTemplate(
  template: string,
): { ok: true; parts: TemplatePart[] } | { ok: false; problem: string } {
  const parts: TemplatePart[] = [];
  let rest = template;
  while (rest !== '') {
    const open = rest.indexOf('{');
    const close = rest.indexOf('}');
    if (close !== -1 && (open === -1 || close < open)) return { ok: false, problem: 'a "}" without its "{"' };
    if (open === -1) {
      parts.push({ kind: 'literal', text: rest });
      break;
    }
    if (open > 0) parts.push({ kind: 'literal', text: rest.slice(0, open) });
    const end = rest.indexOf('}', open);
    if (end === -1) return { ok: false, problem: 'a "{" without its "}"' };
    const body = rest.slice(open + 1, end);
    if (body.includes('{')) return { ok: false, problem: 'a "{" inside an expression' };
    if (body === '') return { ok: false, problem: 'an empty expression {}' };
    const expression = parseExpression(body);
    if (!expression.ok) return expression;
    parts.push(expression.part);
    rest = rest.slice(end + 1);
  }
  return { ok: true, parts };
}

/** The values a template may expand, by variable name; an absent or empty value is unset. */
export type TemplateValues = Readonly<Record<string, string | undefined>>;

type Expanded = { ok: true; text: string } | { ok: false; problem: string };

/**
 * One expression. `{name}` and `{+name}` need a value (the build is refused without one); `{name}` is one
 * segment (every reserved character percent-encoded, byte for byte as `encodeURIComponent`), `{+name}` keeps the
 * value's `/` but refuses an empty, `.` or `..` segment, so a value can never climb out of its place. The other
 * operators follow RFC 6570: an unset variable is left out.
 */
function expandExpression(part: Extract<TemplatePart, { kind: 'expression' }>, values: TemplateValues): Expanded {
  const given = Object.fromEntries(
    part.names.flatMap((name) => {
      const value = values[name];
      return value === undefined || value === '' ? [] : [[name, value]];
    }),
  ) as Record<string, string>;
  const list = part.names.join(',');
  if (part.operator !== '' && part.operator !== '+')
    return { ok: true, text: parseTemplate(`{${part.operator}${list}}`).expand(given) };
  const missing = part.names.find((name) => given[name] === undefined);
  if (missing !== undefined) return { ok: false, problem: `needs {${missing}}` };
  const encoded: Record<string, string> = {};
  for (const name of part.names) {
    const value = given[name]!;
    if (part.operator === '') encoded[name] = encodeURIComponent(value);
    else {
      const segments = value.split('/');
      if (segments.some((s) => s === '' || s === '.' || s === '..'))
        return { ok: false, problem: `{+${name}} holds an empty, "." or ".." path segment` };
      encoded[name] = segments.map(encodeURIComponent).join('/');
    }
  }
  // The values are already encoded; reserved expansion keeps their percent-encoded triplets as they are.
  return { ok: true, text: parseTemplate(`{+${list}}`).expand(encoded) };
}

/** A path segment the URL parser would resolve away: `.` or `..`, also percent-encoded (WHATWG URL). */
const DOT_SEGMENT = /^(\.|%2e){1,2}$/i;

/**
 * Expands a contract path template (`/v1/jobs/{jobId}`, `/v1/jobs{?clientReference}`) under `baseUrl`'s path.
 * Refuses a missing value, an unsafe `{+name}` value, and a value that would make a `.` or `..` path segment.
 * Pure.
 */
export function expandTemplate(
  baseUrl: string,
  template: string,
  values: TemplateValues,
): { ok: true; url: string } | { ok: false; problem: string } {
  const parsed = parseUrlTemplate(template);
  if (!parsed.ok) return { ok: false, problem: `the path template ${template} is not valid: ${parsed.problem}` };
  let expanded = '';
  for (const part of parsed.parts) {
    if (part.kind === 'literal') {
      expanded += part.text;
      continue;
    }
    const result = expandExpression(part, values);
    if (!result.ok)
      return {
        ok: false,
        problem: result.problem.startsWith('needs')
          ? `the path template ${template} ${result.problem}`
          : result.problem,
      };
    expanded += result.text;
  }
  const pathPart = expanded.split(/[?#]/, 1)[0] ?? '';
  if (pathPart.split('/').some((segment) => DOT_SEGMENT.test(segment)))
    return { ok: false, problem: `the path template ${template} would make a "." or ".." path segment` };
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  return { ok: true, url: `${base.origin}${prefix}${expanded}` };
}

/**
 * Appends query parameters (already expanded, in order) to a URL, each name and value percent-encoded as one
 * query component. Pure.
 */
export function appendQuery(url: string, parameters: readonly (readonly [string, string])[]): string {
  if (parameters.length === 0) return url;
  const pairs = parameters.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  const separator = !url.includes('?') ? '?' : url.endsWith('?') || url.endsWith('&') ? '' : '&';
  return `${url}${separator}${pairs.join('&')}`;
}
