import { Annotations, Aws, Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  GraphWidgetView,
  MathExpression,
  SearchExpression,
  Stats,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** CloudWatch namespace of the four meters (POWERTOOLS_METRICS_NAMESPACE). */
/** The id of the synth warning a stack without an alarm e-mail carries. */
export const NO_ALARM_EMAIL_WARNING = 'doers:alarms-notify-nobody';

export const METRICS_NAMESPACE = 'Doers';
/** Default dimension Powertools adds to every record (POWERTOOLS_SERVICE_NAME). */
export const SERVICE_NAME = 'doers';

/** Outcomes of a tool call (docs/deploy-and-operations.md, "Observability"). */
export const TOOL_OUTCOMES = ['ok', 'error', 'denied', 'invalid', 'ratelimited', 'busy', 'failed'] as const;
/** Outcomes of a resource read. */
export const READ_OUTCOMES = ['ok', 'notfound', 'toolarge', 'denied', 'invalid', 'ratelimited', 'busy', 'failed'] as const;

const PERIOD = Duration.minutes(5);
const PERIOD_SECONDS = PERIOD.toSeconds();

/**
 * A SEARCH over one of the four meters. Dimension values vary (tools, methods, statuses), so the
 * dashboard finds the series instead of naming them. The schema lists the metric's exact dimension set
 * (Powertools' `service` default dimension included), so other dimension combinations do not leak in.
 */
export const meterSearch = (
  metricName: 'Requests' | 'ToolCalls' | 'ResourceReads' | 'Refusals',
  dimensions: readonly string[],
  statistic: string,
  filter = '',
): string =>
  `SEARCH('{${[METRICS_NAMESPACE, ...dimensions, 'service'].join(',')}} MetricName="${metricName}" service="${SERVICE_NAME}"${
    filter ? ` ${filter}` : ''
  }', '${statistic}', ${PERIOD_SECONDS})`;

/** Properties of {@link Observability}. */
export interface ObservabilityProps {
  /** The MCP function. */
  readonly handler: IFunction;
  /** The function's timeout, drawn on the duration graph. */
  readonly handlerTimeout: Duration;
  /** The HTTP API in front of it. */
  readonly api: HttpApi;
  /** The tables, labelled. */
  readonly tables: ReadonlyArray<{ readonly label: string; readonly table: ITable }>;
  /**
   * Address that receives alarm (and recovery) notifications through an SNS topic. The recipient must
   * confirm the subscription from the first mail.
   *
   * @default - no topic; alarms only change state
   */
  readonly alarmEmail?: string;
  /**
   * p99 of the function duration above which the latency alarm fires.
   *
   * @default - a third of the timeout (5 s for the 15 s default): far above a warm call (tens of
   * milliseconds) and a cold start (about a second), well below timing out
   */
  readonly latencyThreshold?: Duration;
  /** Share of API requests answered 5xx (percent) above which the 5xx alarm fires. @default 5 */
  readonly serverErrorRatePercent?: number;
  /**
   * The built-in authorization server's function (`/oauth/*`, its metadata, `/account`). When given,
   * the dashboard gets a row of its Lambda graphs and it gets its own alarms (errors, throttles, p99
   * duration), notified like the others.
   *
   * @default - none: an external authorization server, nothing of doers' to watch
   */
  readonly oauthFunction?: ObservedOAuthFunction;
  /**
   * The notifier and the minute function (lib/notifier.ts). When given, they get their alarms (errors of
   * each, the stream's iterator age, records in the dead-letter queue), notified like the others, and a
   * dashboard row.
   *
   * @default - none: nothing tells people (an adopted workspace table without a stream the stack knows)
   */
  readonly notifier?: ObservedNotifier;
  /**
   * Long work's worker and its dead-letter queue (lib/worker.ts): alarms on the worker's outright
   * failures and on any job message it could not handle, and a dashboard row.
   *
   * @default - none
   */
  readonly worker?: ObservedWorker;
}

/** Long work's worker as {@link Observability} watches it. */
export interface ObservedWorker {
  readonly function: IFunction;
  /** Where job messages the worker could not handle go. */
  readonly deadLetterQueue: IQueue;
}

/** The alarms on the worker. */
export interface WorkerAlarms {
  readonly workerErrors: Alarm;
  readonly deadLetters: Alarm;
}

/** The notifier as {@link Observability} watches it. */
export interface ObservedNotifier {
  /** The stream-fed notifier. */
  readonly function: IFunction;
  /** The function run every minute. */
  readonly minuteFunction: IFunction;
  /** Where the stream positions of records given up on go. */
  readonly deadLetterQueue: IQueue;
  /**
   * Age of the newest record read from the stream above which the iterator-age alarm fires.
   *
   * @default ITERATOR_AGE_THRESHOLD (5 minutes)
   */
  readonly iteratorAgeThreshold?: Duration;
}

/** The alarms on the notifier. */
export interface NotifierAlarms {
  readonly notifierErrors: Alarm;
  readonly minuteErrors: Alarm;
  readonly iteratorAge: Alarm;
  readonly deadLetters: Alarm;
}

/**
 * How far behind the notifier may fall: a notice five minutes late is late. A healthy notifier reads a
 * record within seconds; a growing age means batches keep failing and are retried (or Lambda cannot keep up).
 */
export const ITERATOR_AGE_THRESHOLD = Duration.minutes(5);

/** The authorization server's function as {@link Observability} watches it. */
export interface ObservedOAuthFunction {
  /** The function. */
  readonly function: IFunction;
  /** Its timeout, drawn on its duration graph. */
  readonly timeout: Duration;
  /**
   * p99 of its duration above which its latency alarm fires.
   *
   * @default - half the timeout (5 s for the 10 s default): its slowest legitimate path (a cold start that
   * also fetches the sign-in provider's discovery document and JWKS, then redeems a code there) takes a
   * few seconds, and with its low traffic a period's p99 is about its slowest request; half the timeout
   * stays clear of that and still fires well before requests time out (a timeout counts as an error)
   */
  readonly latencyThreshold?: Duration;
}

/** The alarms on the authorization server's function. */
export interface OAuthFunctionAlarms {
  readonly lambdaErrors: Alarm;
  readonly lambdaThrottles: Alarm;
  readonly latencyP99: Alarm;
}

/** What the alarm and graph helpers need to know about a function. */
interface WatchedFunction {
  readonly fn: IFunction;
  /** How alarm descriptions name it. */
  readonly name: string;
  /** How graph titles name it. */
  readonly label: string;
  readonly timeout: Duration;
  readonly latencyThreshold: Duration;
}

const sum = { statistic: Stats.SUM, period: PERIOD } as const;

/** Fires when the function failed outright (unhandled error or timeout) at least once in a period. */
const lambdaErrorsAlarm = (scope: Construct, id: string, w: WatchedFunction, handled: string): Alarm =>
  new Alarm(scope, id, {
    alarmDescription: `The ${w.name} failed outright (unhandled error or timeout). ${handled}`,
    metric: w.fn.metricErrors(sum),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });

/** Fires when the function's p99 duration stayed above its threshold in two of three periods. */
const latencyP99Alarm = (scope: Construct, id: string, w: WatchedFunction): Alarm =>
  new Alarm(scope, id, {
    alarmDescription: `p99 of the ${w.name} duration stayed above ${w.latencyThreshold.toMilliseconds()} ms.`,
    metric: w.fn.metricDuration({ statistic: Stats.p(99), period: PERIOD }),
    threshold: w.latencyThreshold.toMilliseconds(),
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });

const WIDTH = 8;
const HEIGHT = 6;

/** A function's Lambda graphs: invocations, errors and throttles; duration against its alarm and timeout; concurrency. */
const lambdaGraphs = (w: WatchedFunction): GraphWidget[] => [
  new GraphWidget({
    title: `${w.label} invocations, errors, throttles`,
    left: [
      w.fn.metricInvocations({ ...sum, label: 'invocations' }),
      w.fn.metricErrors({ ...sum, label: 'errors' }),
      w.fn.metricThrottles({ ...sum, label: 'throttles' }),
    ],
    width: WIDTH,
    height: HEIGHT,
  }),
  new GraphWidget({
    title: `${w.label} duration (ms)`,
    left: [
      w.fn.metricDuration({ statistic: Stats.p(50), period: PERIOD, label: 'p50' }),
      w.fn.metricDuration({ statistic: Stats.p(99), period: PERIOD, label: 'p99' }),
      w.fn.metricDuration({ statistic: Stats.MAXIMUM, period: PERIOD, label: 'max' }),
    ],
    leftAnnotations: [
      { value: w.latencyThreshold.toMilliseconds(), label: 'p99 alarm' },
      { value: w.timeout.toMilliseconds(), label: 'timeout' },
    ],
    width: WIDTH,
    height: HEIGHT,
  }),
  new GraphWidget({
    title: `${w.label} concurrent executions`,
    left: [w.fn.metric('ConcurrentExecutions', { statistic: Stats.MAXIMUM, period: PERIOD, label: 'max' })],
    width: WIDTH,
    height: HEIGHT,
  }),
];

/**
 * The operator's view: a dashboard with an MCP row (the four meters written by the function through
 * Powertools EMF), a platform row (Lambda, API Gateway, DynamoDB) and, with the built-in authorization
 * server, a row of its function's Lambda graphs and, with the notifier, a row of its functions and its
 * stream; alarms on the API 5xx rate, Lambda errors, DynamoDB throttling and p99 latency, plus the
 * authorization server's Lambda errors, throttles and p99 latency and the notifier's errors, iterator age
 * and dead letters, optionally mailed through SNS.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: {
    readonly apiServerErrorRate: Alarm;
    readonly lambdaErrors: Alarm;
    readonly dynamoDbThrottles: Alarm;
    readonly latencyP99: Alarm;
  };
  /** Alarms on the authorization server's function, when one was given. */
  readonly oauthAlarms: OAuthFunctionAlarms | undefined;
  /** Alarms on the notifier, when one was given. */
  readonly notifierAlarms: NotifierAlarms | undefined;
  /** Alarms on long work's worker, when one was given. */
  readonly workerAlarms: WorkerAlarms | undefined;
  /** Alarm topic, when an e-mail address was given. */
  readonly topic: Topic | undefined;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { api } = props;
    const mcp: WatchedFunction = {
      fn: props.handler,
      name: 'MCP function',
      label: 'Lambda (MCP)',
      timeout: props.handlerTimeout,
      latencyThreshold: props.latencyThreshold ?? Duration.millis(props.handlerTimeout.toMilliseconds() / 3),
    };
    const oauth: WatchedFunction | undefined = props.oauthFunction && {
      fn: props.oauthFunction.function,
      name: "authorization server's function",
      label: 'Lambda (authorization server)',
      timeout: props.oauthFunction.timeout,
      latencyThreshold: props.oauthFunction.latencyThreshold ?? Duration.millis(props.oauthFunction.timeout.toMilliseconds() / 2),
    };

    // ---- alarms -------------------------------------------------------------------------------
    const apiServerErrorRate = new Alarm(this, 'ApiServerErrorRate', {
      alarmDescription:
        'More than the allowed share of MCP requests were answered 5xx by API Gateway (function failures, ' +
        'timeouts, or 503 when tokens could not be checked). Rated only above 10 requests per 5 minutes.',
      metric: new MathExpression({
        label: '5xx rate (%)',
        expression: 'IF(requests >= 10, 100 * errors / requests, 0)',
        usingMetrics: {
          requests: api.metricCount({ statistic: Stats.SUM, period: PERIOD }),
          errors: api.metricServerError({ statistic: Stats.SUM, period: PERIOD }),
        },
        period: PERIOD,
      }),
      threshold: props.serverErrorRatePercent ?? 5,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const lambdaErrors = lambdaErrorsAlarm(
      this,
      'LambdaErrors',
      mcp,
      'Handled failures are answered 500 and counted as ToolCalls outcome=failed instead; this alarm means ' + 'the handler itself broke.',
    );

    const throttleMetrics: Record<string, IMetric> = {};
    props.tables.forEach(({ table }, i) => {
      throttleMetrics[`r${i}`] = table.metric('ReadThrottleEvents', { statistic: Stats.SUM, period: PERIOD });
      throttleMetrics[`w${i}`] = table.metric('WriteThrottleEvents', { statistic: Stats.SUM, period: PERIOD });
    });
    const dynamoDbThrottles = new Alarm(this, 'DynamoDbThrottles', {
      alarmDescription:
        'DynamoDB throttled reads or writes on the doers tables in two of the last three 5-minute periods ' +
        '(on-demand tables throttle on hot keys or sudden traffic far above the previous peak).',
      metric: new MathExpression({
        label: 'throttle events (all tables)',
        expression: Object.keys(throttleMetrics).join(' + '),
        usingMetrics: throttleMetrics,
        period: PERIOD,
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const latencyP99 = latencyP99Alarm(this, 'LatencyP99', mcp);

    this.alarms = { apiServerErrorRate, lambdaErrors, dynamoDbThrottles, latencyP99 };

    // The authorization server's traffic is a few requests per sign-in, lost in the API 5xx rate (which
    // the MCP traffic dominates and which is rated only above 10 requests per period), so its function
    // gets alarms of its own. A throttled request is a sign-in or token request refused outright, so one
    // is enough; the MCP function's throttles show in the 5xx rate instead.
    this.oauthAlarms = oauth && {
      lambdaErrors: lambdaErrorsAlarm(
        this,
        'OAuthLambdaErrors',
        oauth,
        'Handled failures are answered 500 (or an error page) and logged at ERROR in its log group instead; ' +
          'this alarm means the handler itself broke, for example at cold start (secret, sign-in client secret).',
      ),
      lambdaThrottles: new Alarm(this, 'OAuthLambdaThrottles', {
        alarmDescription:
          "Lambda throttled the authorization server's function (no concurrency left in the account or " +
          'region): sign-in, consent or token requests were refused before reaching it.',
        metric: oauth.fn.metricThrottles(sum),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      latencyP99: latencyP99Alarm(this, 'OAuthLatencyP99', oauth),
    };

    // Nobody waits on the notifier's answer, so its failures show nowhere else: each function's outright
    // failures, how far behind the stream it is, and anything it gave up on.
    const notifier = props.notifier && {
      ...props.notifier,
      ageThreshold: props.notifier.iteratorAgeThreshold ?? ITERATOR_AGE_THRESHOLD,
      // Unlabelled: an alarm on a labelled metric is written as a metric query instead of the plain metric.
      iteratorAge: props.notifier.function.metric('IteratorAge', { statistic: Stats.MAXIMUM, period: PERIOD }),
      deadLetters: props.notifier.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: PERIOD }),
    };
    this.notifierAlarms = notifier && {
      notifierErrors: new Alarm(this, 'NotifierErrors', {
        alarmDescription:
          'The notifier failed outright (unhandled error or timeout) on a batch of activity records; the batch is ' +
          'retried (bisected), and records it still cannot handle go to its dead-letter queue.',
        metric: notifier.function.metricErrors(sum),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      minuteErrors: new Alarm(this, 'MinuteErrors', {
        alarmDescription:
          'The minute function failed outright (unhandled error or timeout): reminders and digests due then wait for ' +
          'the next run that succeeds.',
        metric: notifier.minuteFunction.metricErrors(sum),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      iteratorAge: new Alarm(this, 'NotifierIteratorAge', {
        alarmDescription:
          `The notifier is more than ${notifier.ageThreshold.toMinutes()} minutes behind the workspace table's stream in ` +
          '2 of 3 periods: batches keep failing and are retried, so people are told late.',
        metric: notifier.iteratorAge,
        threshold: notifier.ageThreshold.toMilliseconds(),
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      deadLetters: new Alarm(this, 'NotifierDeadLetters', {
        alarmDescription:
          'Activity records the notifier gave up on (retries spent or a day old) are in its dead-letter queue: the people they ' +
          'concern were not told (docs/deploy-and-operations.md, "The notifier").',
        metric: notifier.deadLetters,
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    };
    // A job's own failure ends its task as failed (the client sees it); these are the worker failing
    // outright (a timeout, a crash) and a job message it could not even record, which nobody else sees.
    const worker = props.worker && {
      ...props.worker,
      deadLetters: props.worker.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: PERIOD }),
    };
    this.workerAlarms = worker && {
      workerErrors: new Alarm(this, 'WorkerErrors', {
        alarmDescription:
          'Long work failed outright (unhandled error or 15-minute timeout) on a job of workspace_import or workspace_export; ' +
          'its message is delivered again, and the job is answered as failed once its worker has been silent 20 minutes.',
        metric: worker.function.metricErrors(sum),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      deadLetters: new Alarm(this, 'WorkerDeadLetters', {
        alarmDescription:
          'A job message of long work was delivered 3 times without being handled and is in its dead-letter queue ' +
          '(docs/deploy-and-operations.md, "Long work").',
        metric: worker.deadLetters,
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    };
    const allAlarms = [
      ...Object.values(this.alarms),
      ...Object.values(this.oauthAlarms ?? {}),
      ...Object.values(this.notifierAlarms ?? {}),
      ...Object.values(this.workerAlarms ?? {}),
    ];

    if (props.alarmEmail) {
      this.topic = new Topic(this, 'AlarmTopic', {
        displayName: 'doers alarms',
        // Publishers (CloudWatch) must use TLS; the topic carries alarm state changes only, no data.
        enforceSSL: true,
      });
      this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
      const action = new SnsAction(this.topic);
      for (const alarm of allAlarms) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    } else {
      this.topic = undefined;
      Annotations.of(this).addWarningV2(
        NO_ALARM_EMAIL_WARNING,
        `The ${allAlarms.length} alarms notify nobody: deploy with -c doers:alarmEmail=ops@example.com to have them e-mailed (docs/deploy-and-operations.md, "The dashboard").`,
      );
    }

    // ---- dashboard ----------------------------------------------------------------------------
    const search = (label: string, expression: string): SearchExpression => new SearchExpression({ expression, label, period: PERIOD });
    const outcomeSum = (metricName: 'ToolCalls' | 'ResourceReads', dims: readonly string[], outcome: string) =>
      new MathExpression({
        label: outcome,
        expression: `SUM(${meterSearch(metricName, dims, 'SampleCount', `Outcome="${outcome}"`)})`,
        usingMetrics: {},
        period: PERIOD,
      });

    const width = WIDTH;
    const height = HEIGHT;
    const mcpRow = [
      new GraphWidget({
        title: 'Requests by method and status',
        left: [search('', meterSearch('Requests', ['Method', 'Status'], 'Sum'))],
        stacked: true,
        width,
        height,
      }),
      new GraphWidget({
        title: 'Refusals by reason',
        left: [search('', meterSearch('Refusals', ['Reason'], 'Sum'))],
        stacked: true,
        width,
        height,
      }),
      new GraphWidget({
        title: 'Tool call outcomes',
        left: TOOL_OUTCOMES.map((o) => outcomeSum('ToolCalls', ['Outcome', 'Tool'], o)),
        stacked: true,
        width,
        height,
      }),
      ...(['p50', 'p95', 'p99'] as const).map(
        (p) =>
          new GraphWidget({
            title: `Tool latency ${p} by tool (ms, outcome ok)`,
            left: [search('', meterSearch('ToolCalls', ['Outcome', 'Tool'], p, 'Outcome="ok"'))],
            width,
            height,
          }),
      ),
      new GraphWidget({
        title: 'Resource read outcomes',
        left: READ_OUTCOMES.map((o) => outcomeSum('ResourceReads', ['Outcome', 'Provider'], o)),
        stacked: true,
        width,
        height,
      }),
      new GraphWidget({
        title: 'Resource read latency p99 by provider (ms)',
        left: [search('', meterSearch('ResourceReads', ['Outcome', 'Provider'], 'p99', 'Outcome="ok"'))],
        width,
        height,
      }),
      new AlarmStatusWidget({
        title: 'Alarms',
        alarms: allAlarms,
        width,
        height,
      }),
    ];

    const platformRow = [
      ...lambdaGraphs(mcp),
      new GraphWidget({
        title: 'API requests, 4xx, 5xx',
        left: [api.metricCount({ statistic: Stats.SUM, period: PERIOD, label: 'requests' })],
        right: [
          api.metricClientError({ statistic: Stats.SUM, period: PERIOD, label: '4xx' }),
          api.metricServerError({ statistic: Stats.SUM, period: PERIOD, label: '5xx' }),
        ],
        width,
        height,
      }),
      new GraphWidget({
        title: 'API latency (ms)',
        left: [
          api.metricLatency({ statistic: Stats.p(50), period: PERIOD, label: 'p50' }),
          api.metricLatency({ statistic: Stats.p(99), period: PERIOD, label: 'p99' }),
          api.metricIntegrationLatency({ statistic: Stats.p(99), period: PERIOD, label: 'integration p99' }),
        ],
        width,
        height,
      }),
      new GraphWidget({
        title: 'DynamoDB throttle events by table',
        left: props.tables.flatMap(({ label, table }) => [
          table.metric('ReadThrottleEvents', { statistic: Stats.SUM, period: PERIOD, label: `${label} read` }),
          table.metric('WriteThrottleEvents', { statistic: Stats.SUM, period: PERIOD, label: `${label} write` }),
        ]),
        view: GraphWidgetView.TIME_SERIES,
        width,
        height,
      }),
    ];

    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      widgets: [
        [new TextWidget({ markdown: '## MCP: the four meters (namespace `Doers`, written by the function)', width: 24, height: 1 })],
        mcpRow,
        [new TextWidget({ markdown: '## Platform: Lambda, API Gateway, DynamoDB', width: 24, height: 1 })],
        platformRow,
        [
          new TextWidget({
            // From a slow p99 above to where its time went: the function's traces (active tracing),
            // slowest first, and the audit lines of a trace by its id (each carries xray_trace_id).
            markdown:
              `**A slow p99?** [The MCP function's traces, slowest first](https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}` +
              `#xray:traces/query?~(query~(expression~'service*28id*28name*3a*22${props.handler.functionName}*22*29*29*20AND*20responsetime*20*3e*201'))) ` +
              '(each trace shows its init, its time in the function and the answer); its log lines are found in Logs Insights by ' +
              '`filter xray_trace_id = "<the trace id>"`.',
            width: 24,
            height: 2,
          }),
        ],
        ...(oauth
          ? [
              [
                new TextWidget({
                  markdown: '## Authorization server: its Lambda function (`/oauth/*`, its metadata, `/account`)',
                  width: 24,
                  height: 1,
                }),
              ],
              lambdaGraphs(oauth),
            ]
          : []),
        ...(notifier
          ? [
              [
                new TextWidget({
                  markdown: '## Notifications: the notifier (fed by the stream) and the minute function',
                  width: 24,
                  height: 1,
                }),
              ],
              [
                ...[
                  { fn: notifier.function, label: 'Notifier' },
                  { fn: notifier.minuteFunction, label: 'Minute function' },
                ].map(
                  ({ fn, label }) =>
                    new GraphWidget({
                      title: `${label} invocations, errors, throttles`,
                      left: [
                        fn.metricInvocations({ ...sum, label: 'invocations' }),
                        fn.metricErrors({ ...sum, label: 'errors' }),
                        fn.metricThrottles({ ...sum, label: 'throttles' }),
                      ],
                      width,
                      height,
                    }),
                ),
                new GraphWidget({
                  title: 'Notifier: iterator age (ms), dead letters',
                  left: [notifier.iteratorAge.with({ label: 'iterator age max' })],
                  leftAnnotations: [{ value: notifier.ageThreshold.toMilliseconds(), label: 'iterator age alarm' }],
                  right: [notifier.deadLetters.with({ label: 'dead letters' })],
                  width,
                  height,
                }),
              ],
            ]
          : []),
        ...(worker
          ? [
              [new TextWidget({ markdown: '## Long work: the worker of workspace_import and workspace_export', width: 24, height: 1 })],
              [
                new GraphWidget({
                  title: 'Worker invocations, errors, duration p99',
                  left: [
                    worker.function.metricInvocations({ ...sum, label: 'invocations' }),
                    worker.function.metricErrors({ ...sum, label: 'errors' }),
                  ],
                  right: [worker.function.metricDuration({ statistic: 'p99', period: PERIOD, label: 'duration p99' })],
                  width,
                  height,
                }),
                new GraphWidget({
                  title: 'Worker: dead letters',
                  left: [worker.deadLetters.with({ label: 'dead letters' })],
                  width,
                  height,
                }),
              ],
            ]
          : []),
      ],
    });
  }
}
