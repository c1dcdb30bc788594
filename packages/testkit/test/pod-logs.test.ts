import { describe, expect, it } from 'vitest';
import { MAX_LINES_PER_POD, PodLogs } from '../src/kubernetes/pod-logs.ts';

describe('PodLogs', () => {
  it('keeps each container’s lines apart, and lines of no container for all', () => {
    const logs = new PodLogs();
    logs.append('ns', 'p', 'from a', new Date(0), 'a');
    logs.append('ns', 'p', 'from b', new Date(1), 'b');
    logs.append('ns', 'p', 'appended', new Date(2));
    expect(logs.lines('ns', 'p', 'a').map((l) => l.line)).toEqual(['from a', 'appended']);
    expect(logs.lines('ns', 'p', 'b').map((l) => l.line)).toEqual(['from b', 'appended']);
    expect(logs.lines('ns', 'other')).toEqual([]);
    logs.forget('ns', 'p');
    expect(logs.lines('ns', 'p')).toEqual([]);
  });

  it('drops the oldest lines past its bound', () => {
    const logs = new PodLogs();
    for (let i = 0; i < MAX_LINES_PER_POD + 5; i++) logs.append('ns', 'p', String(i));
    const lines = logs.lines('ns', 'p');
    expect(lines).toHaveLength(MAX_LINES_PER_POD);
    expect(lines[0]?.line).toBe('5');
  });
});
