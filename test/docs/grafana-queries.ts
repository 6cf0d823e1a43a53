/**
 * The PromQL of a Grafana dashboard, taken apart enough to check it against a registry: the series each query
 * selects, the labels it matches, groups by and prints in its legend. Strict on purpose: a query this cannot
 * read whole is reported, never skipped, so a check built on it cannot pass by missing something.
 */

export interface Matcher {
  label: string;
  op: string;
  value: string;
}

/** A series a query reads, with its label matchers (none for a bare name). */
export interface Selector {
  metric: string;
  matchers: Matcher[];
}

export interface ParsedQuery {
  selectors: Selector[];
  /** Labels of by(), without(), on(), ignoring(), group_left() and group_right(). */
  grouping: string[];
  /** The label a template variable's `label_values(query, label)` lists. */
  listed?: string;
}

/** One query of the dashboard and where it is, for messages a reader can find in Grafana. */
export interface DashboardQuery {
  where: string;
  expr: string;
  legendFormat?: string;
}

interface Panel {
  title?: string;
  targets?: { expr?: string; legendFormat?: string; refId?: string }[];
  panels?: Panel[];
}

interface Dashboard {
  panels?: Panel[];
  templating?: { list?: { name: string; type: string; query?: unknown }[] };
}

/** Every panel, those inside rows (collapsed rows hold theirs in `panels`) included. */
export function allPanels(dashboard: Dashboard): Panel[] {
  const walk = (panels: Panel[] = []): Panel[] => panels.flatMap((panel) => [panel, ...walk(panel.panels)]);
  return walk(dashboard.panels);
}

/** Every PromQL expression: panel targets, nested ones included, and template variable queries. */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  const targets = allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `panel "${panel.title}" query ${target.refId}`,
      expr: target.expr ?? '',
      ...(target.legendFormat !== undefined && { legendFormat: target.legendFormat }),
    })),
  );
  const variables = (dashboard.templating?.list ?? [])
    .filter((variable) => variable.type === 'query')
    .map((variable) => {
      const query = variable.query as string | { query?: string } | undefined;
      return {
        where: `variable $${variable.name}`,
        expr: (typeof query === 'string' ? query : query?.query) ?? '',
      };
    });
  return [...targets, ...variables];
}

const NAME = /^[A-Za-z_]\w*$/;
const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const SELECTOR = new RegExp(String.raw`([A-Za-z_:][\w:]*)?\s*\{((?:[^}"]|${STRING})*)\}`, 'g');
const MATCHER = new RegExp(String.raw`^\s*([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*(${STRING})\s*$`);
const GROUPING = /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset']);
const OPERATORS = new Set(['and', 'or', 'unless', 'inf', 'nan']);

/** Takes one PromQL expression (or Grafana's `label_values(…)`) apart; throws on what it cannot read. */
export function parseQuery(expr: string): ParsedQuery {
  const labelValues = expr.match(/^\s*label_values\(\s*(.*?)\s*(?:,\s*([A-Za-z_]\w*)\s*)?\)\s*$/s);
  if (labelValues) {
    const [, inner = '', label] = labelValues;
    if (label === undefined) return { selectors: [], grouping: [], listed: inner };
    return { ...parseQuery(inner), listed: label };
  }
  if (/\b(label_replace|label_join|count_values)\s*\(/.test(expr))
    throw new Error(`names labels in strings, which this check cannot follow: ${expr}`);
  const selectors: Selector[] = [];
  let rest = expr.replace(SELECTOR, (_whole, metric: string | undefined, body: string) => {
    if (!metric) throw new Error(`a selector without a metric name: ${expr}`);
    selectors.push({ metric, matchers: parseMatchers(body, expr) });
    return ' 0 ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ');
  const grouping: string[] = [];
  rest = rest.replace(GROUPING, (_whole, _keyword: string, labels: string) => {
    for (const label of labels.split(',').map((part) => part.trim())) {
      if (label === '') continue;
      if (!NAME.test(label)) throw new Error(`"${label}" is not a label name: ${expr}`);
      grouping.push(label);
    }
    return ' ';
  });
  if (rest.includes('"') || rest.includes('{')) throw new Error(`left unread: ${rest.trim()} in ${expr}`);
  for (const match of rest.matchAll(/(?<![\w.$])[A-Za-z_:][\w:]*/g)) {
    const word = match[0];
    const called = /^\s*\(/.test(rest.slice((match.index ?? 0) + word.length));
    if (called || KEYWORDS.has(word) || OPERATORS.has(word.toLowerCase())) continue;
    selectors.push({ metric: word, matchers: [] });
  }
  return { selectors, grouping };
}

function parseMatchers(body: string, expr: string): Matcher[] {
  const parts = body.match(new RegExp(`(?:[^,"]|${STRING})+`, 'g')) ?? [];
  return parts.map((part) => {
    const match = part.match(MATCHER);
    if (!match) throw new Error(`cannot read the matcher "${part.trim()}" in ${expr}`);
    const [, label = '', op = '', quoted = '""'] = match;
    return { label, op, value: JSON.parse(quoted) as string };
  });
}

/** What a registry exposes: each series name (as scraped: `_total`, `_bucket`…) with its label names. */
export type Exposed = Map<string, Set<string>>;

/** Label → the values seen, over every series or within one. */
export type LabelValues = Map<string, Set<string>>;

/**
 * The series of a Prometheus text exposition (`await registry.metrics()`), with every label value seen: over
 * all series (`values`) and per series (`valuesOf`).
 */
export function parseExposition(text: string): {
  exposed: Exposed;
  values: LabelValues;
  valuesOf: Map<string, LabelValues>;
} {
  const exposed: Exposed = new Map();
  const values: LabelValues = new Map();
  const valuesOf = new Map<string, LabelValues>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = line.match(/^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+\S+$/);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const [, name = '', labels = ''] = match;
    const names = exposed.get(name) ?? new Set<string>();
    exposed.set(name, names);
    const own: LabelValues = valuesOf.get(name) ?? new Map();
    valuesOf.set(name, own);
    for (const [, label = '', quoted = '""'] of labels.matchAll(new RegExp(`(\\w+)=(${STRING})`, 'g'))) {
      names.add(label);
      const value = JSON.parse(quoted) as string;
      for (const seen of [values, own]) seen.set(label, (seen.get(label) ?? new Set<string>()).add(value));
    }
  }
  return { exposed, values, valuesOf };
}

export interface CheckOptions {
  exposed: Exposed;
  /** Labels Prometheus adds when it scrapes (the target's `job`, `instance`), not in the registry. */
  scrapeLabels: readonly string[];
  /** Label → every value it can take; a matcher of `=` or a plain `a|b` regex must name only these. */
  knownValues: Record<string, ReadonlySet<string>>;
  /**
   * The same for one series, `<series>:<label>` → its values, where a label takes other values on other
   * series (`result` of the worker's counter and of its histogram). Wins over knownValues.
   */
  knownSeriesValues?: Record<string, ReadonlySet<string>>;
}

/** What in the dashboard's queries the registry does not expose: a series, a label or a label value. */
export function dashboardProblems(dashboard: Dashboard, options: CheckOptions): string[] {
  return dashboardQueries(dashboard).flatMap((query) => queryProblems(query, options));
}

export function queryProblems(query: DashboardQuery, options: CheckOptions): string[] {
  const { exposed, scrapeLabels, knownValues, knownSeriesValues = {} } = options;
  let parsed: ParsedQuery;
  try {
    parsed = parseQuery(query.expr);
  } catch (error) {
    return [`${query.where}: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  const labelsOf = (metric: string) => new Set([...(exposed.get(metric) ?? []), ...scrapeLabels]);
  const onEvery = (label: string) => parsed.selectors.every(({ metric }) => labelsOf(metric).has(label));
  if (parsed.selectors.length === 0 && parsed.listed === undefined)
    problems.push(`${query.where}: reads no series`);
  for (const { metric, matchers } of parsed.selectors) {
    if (!exposed.has(metric)) problems.push(`${query.where}: no series ${metric}`);
    for (const { label, op, value } of matchers) {
      if (exposed.has(metric) && !labelsOf(metric).has(label))
        problems.push(`${query.where}: ${metric} has no label ${label}`);
      const known = knownSeriesValues[`${metric}:${label}`] ?? knownValues[label];
      if (!known || (op !== '=' && op !== '=~') || value.includes('$')) continue;
      if (op === '=~' && !/^[\w]+(\|[\w]+)*$/.test(value))
        problems.push(`${query.where}: ${label}=~"${value}" is not a plain list of values`);
      for (const one of value.split('|'))
        if (!known.has(one)) problems.push(`${query.where}: ${label}="${one}" is never exposed`);
    }
  }
  for (const label of parsed.grouping)
    if (!onEvery(label)) problems.push(`${query.where}: groups by ${label}, not on every series it reads`);
  if (parsed.listed !== undefined && !onEvery(parsed.listed))
    problems.push(`${query.where}: lists ${parsed.listed}, not a label of its series`);
  for (const [, label = ''] of (query.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
    const kept = parsed.grouping.length > 0 ? parsed.grouping.includes(label) : onEvery(label);
    if (!kept) problems.push(`${query.where}: legend prints {{${label}}}, which the result does not carry`);
  }
  return problems;
}
