import { Gauge, type Registry } from 'prom-client';
import type { LiveQueries } from './live-queries.ts';

/** The live-query gauges of `/metrics` (summed over query threads, as the other gauges). */
export function registerLiveQueryGauges(registry: Registry, live: LiveQueries): void {
  const registers = [registry];
  new Gauge({
    name: 'replix_live_subscriptions',
    help: 'Live queries open (event streams).',
    registers,
    collect() {
      this.set(live.report().subscriptions);
    },
  });
  new Gauge({
    name: 'replix_live_event_bytes',
    help: "Bytes of live-query events waiting for their readers (the streams' and sockets' buffers).",
    registers,
    collect() {
      this.set(live.report().event_bytes);
    },
  });
  new Gauge({
    name: 'replix_live_text_bytes',
    help: 'Bytes counted for the live-query texts held for re-evaluation.',
    registers,
    collect() {
      this.set(live.report().text_bytes);
    },
  });
  new Gauge({
    name: 'replix_live_reevaluations_due',
    help: 'Live queries waiting for their turn to be evaluated again.',
    registers,
    collect() {
      this.set(live.report().reevaluations_due);
    },
  });
}
