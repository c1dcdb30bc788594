// deploy/monitoring: the Prometheus alert rules and the Grafana dashboard. Their structure is
// what Prometheus and Grafana load, and every metric they name is one the control plane or an
// instance registers: the names come from the registries themselves.
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ControlPlaneMetrics } from '../packages/control-plane/src/roles/control-plane-metrics.ts';
import type { LiveQueries } from '../packages/instance/src/threads/live-queries.ts';
import { registerLiveQueryGauges } from '../packages/instance/src/threads/live-query-metrics.ts';
import { InstanceMetrics } from '../packages/instance/src/threads/metrics.ts';
import type { ServedState } from '../packages/instance/src/threads/served-state.ts';

/** Grafana's reference to the dashboard's data source variable, written as Grafana reads it. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's syntax, not a template
const DATASOURCE_UID = '${datasource}';

const folder = new URL('../deploy/monitoring/', import.meta.url);
const rules = parse(readFileSync(new URL('replix-alerts.yaml', folder), 'utf8'));
const dashboard = JSON.parse(readFileSync(new URL('replix-dashboard.json', folder), 'utf8'));

/** Every series name a scrape can return, by each registry's metrics and their types. */
function seriesNames(registries: readonly Registry[]): Set<string> {
  const names = new Set<string>();
  for (const registry of registries) {
    for (const metric of registry.getMetricsAsArray()) {
      const { name, type } = metric as unknown as { name: string; type: string };
      names.add(name);
      if (type === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    }
  }
  return names;
}

// Only the metrics' names are read: no scrape runs, so neither a store nor a snapshot is needed.
const controlPlane = new ControlPlaneMetrics(undefined as never);
const instance = new InstanceMetrics(undefined as unknown as ServedState);
registerLiveQueryGauges(instance.registry, undefined as unknown as LiveQueries);
const REGISTERED = seriesNames([controlPlane.registry, instance.registry]);

/** The metric names a PromQL expression reads (ours all start with `replix_`). */
const metricsIn = (expr: string) => [...expr.matchAll(/\breplix_[a-z0-9_]+/g)].map((m) => m[0]);

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

describe('the alert rules (replix-alerts.yaml)', () => {
  const all: Rule[] = rules.groups.flatMap((group: { rules: Rule[] }) => group.rules);

  it('are groups of named rules, as Prometheus loads them', () => {
    expect(Object.keys(rules)).toEqual(['groups']);
    for (const group of rules.groups) {
      expect(Object.keys(group).sort()).toEqual(['name', 'rules']);
      expect(group.name).toMatch(/^replix-[a-z-]+$/);
      expect(group.rules.length).toBeGreaterThan(0);
    }
    expect(new Set(rules.groups.map((group: { name: string }) => group.name)).size).toBe(
      rules.groups.length,
    );
  });

  it('each alert has an expression, a severity and a summary, and a duration Prometheus reads', () => {
    for (const rule of all) {
      const keys = Object.keys(rule).filter((key) => key !== 'for');
      expect({ alert: rule.alert, keys: keys.sort() }).toEqual({
        alert: rule.alert,
        keys: ['alert', 'annotations', 'expr', 'labels'],
      });
      expect(rule.alert).toMatch(/^Replix[A-Z][A-Za-z]+$/);
      expect(typeof rule.expr).toBe('string');
      expect(['critical', 'warning', 'info']).toContain(rule.labels.severity);
      expect(rule.annotations.summary).toBeTruthy();
      expect(rule.annotations.description).toBeTruthy();
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(metricsIn(rule.expr).length).toBeGreaterThan(0);
    }
    expect(new Set(all.map((rule) => rule.alert)).size).toBe(all.length);
  });

  it('alert on stale snapshots, failed goals and unhealthy instances', () => {
    const reads = (metric: string) => all.filter((rule) => metricsIn(rule.expr).includes(metric));
    expect(reads('replix_snapshot_age_seconds').length).toBeGreaterThan(0);
    expect(
      reads('replix_control_plane_goals_finished_total').some((rule) =>
        rule.expr.includes('outcome="failed"'),
      ),
    ).toBe(true);
    expect(
      reads('replix_control_plane_instances').some((rule) => rule.expr.includes('unreachable')),
    ).toBe(true);
  });

  it('name only metrics the control plane or an instance registers', () => {
    for (const rule of all)
      for (const metric of metricsIn(rule.expr))
        expect({ alert: rule.alert, metric, registered: REGISTERED.has(metric) }).toEqual({
          alert: rule.alert,
          metric,
          registered: true,
        });
  });
});

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Array<{ refId: string; expr: string; datasource: { uid: string } }>;
}

describe('the Grafana dashboard (replix-dashboard.json)', () => {
  const panels: Panel[] = dashboard.panels;
  const graphs = panels.filter((panel) => panel.type !== 'row');

  it('asks for its Prometheus data source, and every panel queries through it', () => {
    const variable = dashboard.templating.list.find(
      (entry: { name: string }) => entry.name === 'datasource',
    );
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length);
    for (const panel of graphs) {
      expect({ title: panel.title, datasource: panel.datasource }).toEqual({
        title: panel.title,
        datasource: { type: 'prometheus', uid: DATASOURCE_UID },
      });
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        expect(target.refId).toMatch(/^[A-Z]$/);
        expect(target.datasource.uid).toBe(DATASOURCE_UID);
      }
    }
  });

  it('shows what the control plane and the instances report', () => {
    const shown = new Set(
      graphs.flatMap((panel) => panel.targets?.flatMap((t) => metricsIn(t.expr)) ?? []),
    );
    for (const metric of [
      'replix_control_plane_http_requests_total',
      'replix_control_plane_http_request_duration_seconds_bucket',
      'replix_control_plane_goals_finished_total',
      'replix_control_plane_goal_duration_seconds_bucket',
      'replix_control_plane_builds_finished_total',
      'replix_control_plane_webhook_attempts_total',
      'replix_control_plane_instances',
      'replix_control_plane_reconciler_lag_seconds',
      'replix_snapshot_age_seconds',
      'replix_queries_total',
      'replix_query_duration_seconds_bucket',
    ])
      expect(shown).toContain(metric);
  });

  it('names only metrics the control plane or an instance registers', () => {
    for (const panel of graphs)
      for (const target of panel.targets ?? [])
        for (const metric of metricsIn(target.expr))
          expect({ panel: panel.title, metric, registered: REGISTERED.has(metric) }).toEqual({
            panel: panel.title,
            metric,
            registered: true,
          });
  });
});
