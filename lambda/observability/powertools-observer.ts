import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ClientInfo } from '../vocabulary.js';
import type { Observer, ResourceReadEvent, ToolCallEvent } from './observer.js';

export const METRICS_NAMESPACE = 'Doers';

/** The client reports its own name; it is logged (never a metric dimension), bounded in length. */
const clientName = (info: ClientInfo | undefined): string =>
  typeof info?.name === 'string' && info.name !== '' ? info.name.slice(0, 64) : 'unknown';

const ms = (d: number): number => Math.round(d * 10) / 10;

/**
 * The audit line (one per tool call and per resource read: argument names, never values; the
 * provider prefix, never the id) and the four meters as CloudWatch EMF via Powertools. Each record
 * is a single metric with its own dimension set, so one invocation can emit several shapes.
 */
export const createPowertoolsObserver = (
  logger: Logger,
  metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'doers' }),
): Observer => {
  const emit = (
    name: string,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    value: number,
    dimensions: Record<string, string>,
    items?: number,
  ): void => {
    const single = metrics.singleMetric();
    for (const [k, v] of Object.entries(dimensions)) single.addDimension(k, v);
    single.addMetric(name, unit, value);
    // A bulk call is one call with many items: the count rides in the same record.
    if (items !== undefined) single.addMetric('Items', MetricUnit.Count, items);
  };
  return {
    toolCall(e: ToolCallEvent) {
      logger.info('MCP tool call', {
        audit: 'tool_call',
        client: clientName(e.clientInfo),
        workspaceId: e.principal.workspaceId,
        userId: e.principal.userId,
        tool: e.tool,
        args: [...e.argNames].sort(),
        durationMs: ms(e.durationMs),
        outcome: e.outcome,
        ...(e.items !== undefined ? { items: e.items } : {}),
      });
      emit('ToolCalls', MetricUnit.Milliseconds, ms(e.durationMs), { Tool: e.tool, Outcome: e.outcome }, e.items);
    },
    resourceRead(e: ResourceReadEvent) {
      logger.info('MCP resource read', {
        audit: 'resource_read',
        client: clientName(e.clientInfo),
        workspaceId: e.principal.workspaceId,
        userId: e.principal.userId,
        resource: e.provider,
        durationMs: ms(e.durationMs),
        outcome: e.outcome,
      });
      emit('ResourceReads', MetricUnit.Milliseconds, ms(e.durationMs), { Provider: e.provider, Outcome: e.outcome });
    },
    request(e) {
      emit('Requests', MetricUnit.Count, 1, { Method: e.method, Status: String(e.status) });
    },
    refusal(reason) {
      emit('Refusals', MetricUnit.Count, 1, { Reason: reason });
    },
  };
};
