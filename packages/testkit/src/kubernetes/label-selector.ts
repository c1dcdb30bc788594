import { badRequest } from './api-status.ts';

type Requirement = (labels: Record<string, string>) => boolean;

/**
 * A `labelSelector` query as a predicate: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
 * `k notin (a,b)`, `k` and `!k`, joined by commas. Anything else is a 400, as from the API server.
 */
export function parseLabelSelector(text: string): Requirement {
  const requirements = splitTopLevel(text.trim()).map(parseRequirement);
  return (labels) => requirements.every((matches) => matches(labels));
}

function splitTopLevel(text: string): string[] {
  if (text === '') return [];
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

const KEY = '([A-Za-z0-9][-A-Za-z0-9_./]*)';
const VALUE = '([-A-Za-z0-9_.]*)';
const EQUALS = new RegExp(`^${KEY}\\s*(==|=|!=)\\s*${VALUE}$`);
const SET = new RegExp(`^${KEY}\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const EXISTS = new RegExp(`^(!?)${KEY}$`);

function parseRequirement(text: string): Requirement {
  const equals = EQUALS.exec(text);
  if (equals) {
    const [, key, operator, value] = equals as unknown as [string, string, string, string];
    return operator === '!='
      ? (labels) => labels[key] !== value
      : (labels) => labels[key] === value;
  }
  const set = SET.exec(text);
  if (set) {
    const [, key, operator, list] = set as unknown as [string, string, string, string];
    const values = new Set(list.split(',').map((value) => value.trim()));
    return operator === 'in'
      ? (labels) => labels[key] !== undefined && values.has(labels[key])
      : (labels) => labels[key] === undefined || !values.has(labels[key]);
  }
  const exists = EXISTS.exec(text);
  if (exists) {
    const [, negated, key] = exists as unknown as [string, string, string];
    return negated ? (labels) => labels[key] === undefined : (labels) => labels[key] !== undefined;
  }
  throw badRequest(`unable to parse requirement: ${JSON.stringify(text)}`);
}
