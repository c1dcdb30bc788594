import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addServeCommand } from '../src/serve-command.ts';

describe('replix serve --help', () => {
  it('shows the ready line with both keys and what each may do', () => {
    const program = new Command('replix');
    addServeCommand(program);
    let help = '';
    const serve = program.commands.find((command) => command.name() === 'serve');
    serve?.configureOutput({ writeOut: (text) => (help += text) });
    serve?.outputHelp();
    expect(help).toContain(
      '{"event":"ready","url":"http://127.0.0.1:PORT","apiKey":"rxk_…","adminKey":"rxk_…","time":1764079387120}',
    );
    expect(help).toContain('apiKey is a query key (POST/GET /query, GET /schema)');
    expect(help).toContain('REPLIX_ADMIN_KEY_IDS');
  });
});
