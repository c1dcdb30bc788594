import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import { formatAxisTime, formatDateTime } from './date-time.ts';
import { WINDOW_MS } from './instance-metrics-history.ts';
import 'uplot/dist/uPlot.min.css';
import { Panel } from './page.tsx';

const COLOURS = ['#2952cc', '#b42318', '#17803d', '#8a5a00', '#6b3fa0', '#0e7490'];

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
}

/**
 * A time chart (uPlot) that fills its container's width and follows it when it resizes.
 * The canvas is hidden from screen readers: the summary says the same in words.
 */
export function MetricsChart(props: {
  title: string;
  /** The latest value(s) in words, e.g. "Latest: 3.2 queries per second". */
  summary: string;
  /** Seconds since the epoch. */
  x: number[];
  series: ChartSeries[];
  format: (value: number) => string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const height = props.height ?? 180;
  const format = useRef(props.format);
  format.current = props.format;
  // The chart is made again only when its series change (a table appears), not per reading.
  const shape = props.series.map((series) => series.label).join('\n');

  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuilt per shape; data is set below.
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const show = (value: number | null) => (value === null ? '–' : format.current(value));
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height,
      scales: {
        // Always the whole window, ending now: one reading is not a time axis, and the axis
        // starts where the history does, not at the first reading.
        x: {
          time: true,
          range: () => {
            const now = Date.now() / 1000;
            return [now - WINDOW_MS / 1000, now];
          },
        },
        // From zero: a flat line at 0 should look like nothing happening, not noise.
        y: { range: (_chart, _min, max) => [0, max > 0 ? max * 1.15 : 1] },
      },
      axes: [
        {
          stroke: '#5d6678',
          grid: { stroke: '#eceef2' },
          // The dashboard's format: hours and minutes, the date at midnight.
          values: (_chart, ticks) => ticks.map((tick) => formatAxisTime(tick * 1000)),
        },
        {
          stroke: '#5d6678',
          grid: { stroke: '#eceef2' },
          size: 72,
          values: (_chart, ticks) => ticks.map((tick) => format.current(tick)),
        },
      ],
      series: [
        {
          value: (_chart: uPlot, value: number | null) =>
            value === null ? '–' : formatDateTime(value * 1000),
        },
        ...props.series.map((series, index) => ({
          label: series.label,
          stroke: COLOURS[index % COLOURS.length],
          width: 2,
          // uPlot shows points only where readings are sparse: a lone reading stays visible.
          value: (_chart: uPlot, value: number | null) => show(value),
        })),
      ],
      legend: { show: props.series.length > 1 },
    };
    const plot = new uPlot(options, [[]], element);
    chart.current = plot;
    const observer = new ResizeObserver(() => {
      plot.setSize({ width: Math.max(element.clientWidth, 200), height });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
      chart.current = null;
    };
  }, [shape, height]);

  useEffect(() => {
    chart.current?.setData([props.x, ...props.series.map((series) => series.values)]);
  });

  return (
    <Panel title={props.title}>
      <p className="ops-chart-summary">{props.summary}</p>
      <div ref={box} className="ops-chart" aria-hidden="true" />
    </Panel>
  );
}
