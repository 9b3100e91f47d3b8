/** How one call is sent, after its method and URL: query parameters, headers as sent, and the body template. Pure. */
import { type RequestTemplate } from '../contract';
import { code, headerValueText } from './phrases';

/** A JSON template shown on one line, at most 300 characters (longer ones are cut and say so). */
function jsonText(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}... (${text.length} characters)` : text;
}

/**
 * The lines of a call after its first (method and URL template), each indented two spaces: the query parameters
 * (left out when a variable they name is unset), the headers as the builder sends them (the default `accept`
 * unless the call sets its own, the body's content type, the call's headers), and the body template.
 */
export function requestDetailLines(template: RequestTemplate, accept: string, contentType?: string): string[] {
  const lines: string[] = [];
  const query = Object.entries(template.query ?? {});
  if (query.length > 0)
    lines.push(
      `  query: ${query.map(([name, value]) => `${name}=${value}`).join('&')} (a parameter naming an unset variable is left out)`,
    );
  const own = new Set(Object.keys(template.headers ?? {}).map((name) => name.toLowerCase()));
  if (!own.has('accept')) lines.push(`  header accept: ${accept}`);
  const bodyType = template.body?.contentType ?? contentType;
  if (bodyType !== undefined) lines.push(`  header content-type: ${bodyType} (the body's content type)`);
  for (const [name, source] of Object.entries(template.headers ?? {}))
    lines.push(`  header ${name.toLowerCase()}: ${headerValueText(source)}`);
  const body = template.body;
  if (body !== undefined && 'json' in body)
    lines.push(
      `  body: JSON ${code(jsonText(body.json))} (a member that is exactly "{name}" takes the value, and is left out when it is unset)`,
    );
  else if (body !== undefined)
    lines.push(`  body: ${code(jsonText(body.raw))}, sent as written with its {name} values`);
  return lines;
}
