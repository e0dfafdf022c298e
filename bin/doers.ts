#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ContextError, parseContext } from '../lib/context.js';
import { DoersStack } from '../lib/doers-stack.js';

/**
 * The CDK app: reads the `doers:*` context once (cdk.json, overridden by `-c key=value`), validates
 * it, and builds the one stack. The stack is environment-agnostic: it deploys into the account and
 * region of the credentials `cdk deploy` runs with, and synthesizes offline without any.
 */
const app = new App();

let settings: ReturnType<typeof parseContext>;
try {
  settings = parseContext(app.node.getAllContext());
} catch (error) {
  if (error instanceof ContextError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

new DoersStack(app, settings.stackName, {
  stackName: settings.stackName,
  description: 'doers: team task workspace served as a remote MCP endpoint (API Gateway, Lambda, DynamoDB)',
  settings,
});

// AWS Solutions checks (cdk-nag 3, a CDK policy-validation plugin) on every synth: any finding that is
// not acknowledged with a reason (Validations.of(construct).acknowledge) fails `cdk synth`/`cdk deploy`.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
