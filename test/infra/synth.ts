import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PolicyValidationPluginReport } from 'aws-cdk-lib';
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { DoersSettings } from '../../lib/context.js';
import { parseContext } from '../../lib/context.js';
import { DoersStack } from '../../lib/doers-stack.js';

/** Temporary cloud-assembly directories, removed when the test process exits. */
const scratchDirs: string[] = [];
process.on('exit', () => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});
/** A fresh temporary directory that is removed when the test process exits. */
export const scratchDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratchDirs.push(dir);
  return dir;
};

/** The `context` block of cdk.json: defaults and CDK feature flags exactly as `cdk synth` sees them. */
export const cdkJsonContext = (): Record<string, unknown> => {
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context: Record<string, unknown>;
  };
  return cdkJson.context;
};

export interface Synthesized {
  readonly app: App;
  readonly stack: DoersStack;
  readonly settings: DoersSettings;
  readonly template: Template;
  /** The cloud assembly directory (bundled function code is staged here). */
  readonly outdir: string;
}

/**
 * Builds the app the way bin/doers.ts does (cdk.json context, overridden like `-c key=value`, parsed
 * once, AwsSolutions checks registered) and synthesizes it. Synthesis runs the policy-validation
 * plugins, so it throws if any AwsSolutions finding is not acknowledged.
 */
export const synth = (overrides: Record<string, unknown> = {}, options: { readonly bundle?: boolean } = {}): Synthesized => {
  const outdir = scratchDir('doers-cdk-');
  // Bundling (esbuild over lambda/) is the slow part; variants that only look at the template skip it
  // through CDK's own switch: no stack is listed for bundling, so the function gets a placeholder asset.
  const bundling = options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {};
  const app = new App({ outdir, context: { ...cdkJsonContext(), ...overrides, ...bundling } });
  const settings = parseContext(app.node.getAllContext());
  const stack = new DoersStack(app, settings.stackName, { stackName: settings.stackName, settings });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  const template = Template.fromStack(stack);
  return { app, stack, settings, template, outdir };
};

/** Runs the AwsSolutions pack directly over a construct tree (the same check synthesis runs). */
export const nagReport = (scope: IConstruct): PolicyValidationPluginReport =>
  new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(scope);

/** Every acknowledgement recorded in the tree: rule id → reason, with the construct path. */
export const acknowledgements = (scope: IConstruct): Array<{ readonly path: string; readonly id: string; readonly reason: unknown }> =>
  scope.node
    .findAll()
    .flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) => Object.entries(m.data as Record<string, unknown>).map(([id, reason]) => ({ path: c.node.path, id, reason }))),
    );

type Json = unknown;

/**
 * Renders a CloudFormation value to a string for substring assertions: literals stay, `Fn::Join` is
 * joined, other intrinsics become `${Ref:X}` / `${X.Attr}` / `${Fn}` placeholders.
 */
export const render = (value: Json): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(render).join(',');
  if (value && typeof value === 'object') {
    const o = value as Record<string, Json>;
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, Json[]];
      return parts.map(render).join(sep);
    }
    if ('Ref' in o) return `\${Ref:${String(o.Ref)}}`;
    if ('Fn::GetAtt' in o) {
      const [id, attr] = o['Fn::GetAtt'] as [string, string];
      return `\${${id}.${attr}}`;
    }
    const key = Object.keys(o)[0] ?? '';
    return `\${${key}}`;
  }
  return '';
};

/** The single resource of a type (fails when there is not exactly one). */
export const onlyResource = (
  template: Template,
  type: string,
): { readonly logicalId: string; readonly resource: Record<string, Json> & { Properties: Record<string, Json> } } => {
  const found = Object.entries(template.findResources(type));
  if (found.length !== 1) throw new Error(`expected exactly one ${type}, found ${found.length}`);
  const [logicalId, resource] = found[0]!;
  return { logicalId, resource: resource as Record<string, Json> & { Properties: Record<string, Json> } };
};

/**
 * The stack's functions: the MCP endpoint's, the built-in authorization server's, the notifier's two
 * (the stream-fed notifier and the minute function), and long work's worker.
 */
export type FunctionName = 'mcp' | 'oauth' | 'notifier' | 'minute' | 'worker';
/**
 * What each function's resources' logical IDs start with (`<prefix>Handler`, `<prefix>Role`): its construct's
 * ID in the stack, and for the minute function the ID inside the Notifier construct too.
 */
const FUNCTION_CONSTRUCT_ID: Readonly<Record<FunctionName, string>> = {
  mcp: 'Function',
  oauth: 'OAuth',
  notifier: 'Notifier',
  minute: 'NotifierMinute',
  worker: 'Worker',
};

/** The single resource of a type whose logical ID starts with `prefix` (fails when there is not exactly one). */
export const resourceWithPrefix = (
  template: Template,
  type: string,
  prefix: string,
): { readonly logicalId: string; readonly resource: Record<string, Json> & { Properties: Record<string, Json> } } => {
  const found = Object.entries(template.findResources(type)).filter(([id]) => id.startsWith(prefix));
  if (found.length !== 1) throw new Error(`expected exactly one ${type} named ${prefix}*, found ${found.length}`);
  const [logicalId, resource] = found[0]!;
  return { logicalId, resource: resource as Record<string, Json> & { Properties: Record<string, Json> } };
};

/** One of the Lambda functions. */
export const lambdaFunction = (template: Template, name: FunctionName = 'mcp'): ReturnType<typeof resourceWithPrefix> =>
  resourceWithPrefix(template, 'AWS::Lambda::Function', `${FUNCTION_CONSTRUCT_ID[name]}Handler`);

/** The alarms on one function's own Lambda metrics (dimension FunctionName = that function), by metric name. */
export const functionAlarms = (template: Template, name: FunctionName): Record<string, Record<string, Json>> => {
  const fn = lambdaFunction(template, name).logicalId;
  const found: Record<string, Record<string, Json>> = {};
  for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
    const props = (alarm as { Properties: Record<string, Json> }).Properties;
    const dimensions = (props.Dimensions ?? []) as Array<{ Name: string; Value: { Ref?: string } }>;
    const onFunction = dimensions.some((d) => d.Name === 'FunctionName' && d.Value.Ref === fn);
    if (props.Namespace !== 'AWS/Lambda' || !onFunction) continue;
    const metric = String(props.MetricName);
    if (metric in found) throw new Error(`two ${metric} alarms on the ${name} function`);
    found[metric] = props;
  }
  return found;
};

/** The execution role of one of the functions. */
export const functionRole = (template: Template, name: FunctionName = 'mcp'): ReturnType<typeof resourceWithPrefix> =>
  resourceWithPrefix(template, 'AWS::IAM::Role', `${FUNCTION_CONSTRUCT_ID[name]}Role`);

/** A function's environment variables (the MCP function's unless told). */
export const functionEnvironment = (template: Template, name: FunctionName = 'mcp'): Record<string, Json> => {
  const { resource } = lambdaFunction(template, name);
  const env = resource.Properties.Environment as { Variables: Record<string, Json> };
  return env.Variables;
};

/** All IAM policy statements of the template, flattened. */
export const policyStatements = (
  template: Template,
): Array<{ readonly Effect: string; readonly Action: string | string[]; readonly Resource: Json }> =>
  Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (p) =>
      (p as { Properties: { PolicyDocument: { Statement: Array<{ Effect: string; Action: string | string[]; Resource: Json }> } } })
        .Properties.PolicyDocument.Statement,
  );

/** The IAM policy statements attached to one function's role. */
export const rolePolicyStatements = (
  template: Template,
  name: FunctionName,
): Array<{ readonly Effect: string; readonly Action: string | string[]; readonly Resource: Json }> => {
  const role = functionRole(template, name).logicalId;
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .map(
      (p) =>
        (
          p as {
            Properties: {
              Roles: Json[];
              PolicyDocument: { Statement: Array<{ Effect: string; Action: string | string[]; Resource: Json }> };
            };
          }
        ).Properties,
    )
    .filter((p) => p.Roles.some((r) => (r as { Ref?: string }).Ref === role))
    .flatMap((p) => p.PolicyDocument.Statement);
};

export const actionsOf = (statement: { readonly Action: string | string[] }): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

/**
 * The AwsSolutions findings the stack raises before any acknowledgement: the stack is built again with
 * `Validations.acknowledge` switched off for the duration of the (synchronous) construction.
 */
export const rawFindings = (overrides: Record<string, unknown> = {}): string[] => {
  const app = new App({
    outdir: scratchDir('doers-cdk-raw-'),
    context: { ...cdkJsonContext(), ...overrides, 'aws:cdk:bundling-stacks': [] },
  });
  const settings = parseContext(app.node.getAllContext());
  const original = Validations.prototype.acknowledge;
  Validations.prototype.acknowledge = () => undefined;
  try {
    new DoersStack(app, settings.stackName, { stackName: settings.stackName, settings });
  } finally {
    Validations.prototype.acknowledge = original;
  }
  return nagReport(app).violations.map((v) => v.ruleName);
};
