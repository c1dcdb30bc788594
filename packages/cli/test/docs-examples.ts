import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The examples of the docs that the docs-examples test runs (CONTRIBUTING.md, "Examples in the
 * docs run"): fenced blocks whose language is a shell (`sh`, `bash`, `shell`, `console`) or
 * `query`. Any other fence (json, sql, ts, plain) is output, a template or another language.
 */
export interface DocExample {
  /** The doc, relative to the repository root. */
  readonly file: string;
  /** The line of the opening fence (1-based). */
  readonly line: number;
  readonly kind: 'shell' | 'console' | 'query';
  /** The block's text, its indentation removed. */
  readonly code: string;
  /** What a shell block prints, from the `text` block right after it. */
  readonly output?: string;
  /** Why it does not run here: the fence's `no-run: <reason>`; absent for an example that runs. */
  readonly noRun?: string;
}

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell']);
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

interface Fence {
  readonly line: number;
  readonly info: string;
  readonly code: string;
  /** The line of the closing fence. */
  readonly end: number;
}

/** Every fenced block of a markdown text. */
function fences(lines: readonly string[]): Fence[] {
  const found: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const body: string[] = [];
    let end = i + 1;
    for (; end < lines.length; end++) {
      const line = lines[end] as string;
      if (closes(line, fence)) break;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    found.push({ line: i + 1, info: info.trim(), code: body.join('\n'), end: end + 1 });
    i = end;
  }
  return found;
}

/**
 * The runnable-or-excluded examples of one markdown text. A `text` block right after a shell
 * block (nothing but blank lines between) is what that block prints. Throws on a marker other
 * than `no-run: <reason>`.
 */
export function extractExamples(file: string, markdown: string): DocExample[] {
  const lines = markdown.split('\n');
  const blocks = fences(lines);
  const examples: DocExample[] = [];
  blocks.forEach((block, index) => {
    const example = toExample(file, block.line, block.info, block.code);
    if (!example) return;
    const next = blocks[index + 1];
    const adjacent =
      next !== undefined &&
      next.info === 'text' &&
      lines.slice(block.end, next.line - 1).every((line) => line.trim() === '');
    examples.push(
      adjacent && example.kind === 'shell' ? { ...example, output: next.code } : example,
    );
  });
  return examples;
}

/** A closing fence: up to 3 spaces, then at least as many of the opening's characters, alone. */
function closes(line: string, fence: string): boolean {
  const text = line.trim();
  return (
    /^ {0,3}\S/.test(line) && text.length >= fence.length && [...text].every((c) => c === fence[0])
  );
}

function toExample(file: string, line: number, info: string, code: string): DocExample | undefined {
  const [language = '', ...rest] = info.split(/\s+/);
  const kind = SHELL_LANGUAGES.has(language)
    ? 'shell'
    : language === 'console' || language === 'query'
      ? language
      : undefined;
  if (!kind) return undefined;
  const markers = rest.join(' ');
  if (markers === '') return { file, line, kind, code };
  const noRun = /^no-run:\s*(\S.*)$/.exec(markers);
  if (!noRun) {
    throw new Error(
      `${file}:${line}: the fence says "${info}"; an example that cannot run says why: \`\`\`${language} no-run: <reason>`,
    );
  }
  return { file, line, kind, code, noRun: noRun[1] as string };
}

/** The queries of a `query` block: separated by blank lines. */
export function queriesOf(code: string): string[] {
  return code
    .split(/\n\s*\n/)
    .map((query) => query.trim())
    .filter(Boolean);
}

/** A `console` block: the `$ ` lines (with `\` continuations) are run, the rest is their output. */
export function splitConsole(code: string): { commands: string; output: string } {
  const commands: string[] = [];
  const output: string[] = [];
  let continued = false;
  for (const line of code.split('\n')) {
    if (continued || line.startsWith('$ ')) {
      commands.push(continued ? line : line.slice(2));
      continued = line.endsWith('\\');
    } else output.push(line);
  }
  return { commands: commands.join('\n'), output: output.join('\n').trim() };
}

/**
 * The outputs a shell block shows beside its commands, as a trailing comment that starts with a
 * JSON object: `rx -X POST …/terminate   # {"status":"terminating"}` shows `{"status":"terminating"}`.
 */
export function shownOutputs(code: string): string[] {
  const shown: string[] = [];
  for (const line of code.split('\n')) {
    const comment = /\s#\s*(\{.*)$/.exec(line)?.[1];
    if (!comment) continue;
    let depth = 0;
    for (let i = 0; i < comment.length; i++) {
      depth += comment[i] === '{' ? 1 : comment[i] === '}' ? -1 : 0;
      if (depth === 0) {
        shown.push(comment.slice(0, i + 1));
        break;
      }
    }
  }
  return shown;
}

/** Whether `printed` holds each of `shown`, in order, white space aside (`…` stands for anything). */
export function printsInOrder(shown: readonly string[], printed: string): boolean {
  const pattern = shown.map((text) => wildcardPattern(text.replace(/\s+/g, ''))).join('[\\s\\S]*?');
  return new RegExp(pattern).test(printed.replace(/\s+/g, ''));
}

const regexLiteral = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regular expression source for `text`, where `…` stands for anything. */
function wildcardPattern(text: string): string {
  return text.split('…').map(regexLiteral).join('[\\s\\S]*?');
}

// What changes from run to run, written in a doc as an example value: each matches any value
// of its shape.
const VOLATILE: readonly (readonly [RegExp, string])[] = [
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z'],
  [/127\.0\.0\.1:\d+/g, '127\\.0\\.0\\.1:\\d+'],
  [/\b[0-9a-f]{4,}…/g, '[0-9a-f-]+'],
  [/…/g, '[\\s\\S]*?'],
];
// Stand-ins for the shapes while the rest is escaped: characters of Unicode's private use area.
const standIn = (index: number) => String.fromCodePoint(0xf0000 + index);

/**
 * Whether `actual` is what a doc shows as `expected`: runs of white space compare equal, `…`
 * stands for anything, and a time (`2026-01-01T12:00:00.000Z`), a local address's port
 * (`127.0.0.1:35423`) or an abbreviated id (`7d1c…`) for any other.
 */
export function outputMatches(expected: string, actual: string): boolean {
  let text = expected.trim();
  VOLATILE.forEach(([shape], index) => {
    text = text.replace(shape, standIn(index));
  });
  let pattern = text.split(/\s+/).map(regexLiteral).join('\\s+');
  VOLATILE.forEach(([, any], index) => {
    pattern = pattern.replaceAll(standIn(index), any);
  });
  return new RegExp(`^${pattern}$`, 'u').test(actual.trim());
}

/** README.md and every `docs/**` markdown file, in path order. */
export function docFiles(root: string): string[] {
  const found: string[] = [join(root, 'README.md')];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk(join(root, 'docs'));
  return found;
}

/** Every example of README.md and docs/, grouped by doc in path order. */
export function docExamples(root: string): DocExample[] {
  return docFiles(root).flatMap((path) =>
    extractExamples(relative(root, path), readFileSync(path, 'utf8')),
  );
}
