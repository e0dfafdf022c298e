import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ReadContext } from '../../lambda/mcp/resource-registry.js';
import type { ToolDefinition } from '../../lambda/mcp/tool-registry.js';
import { linkViews, viewResources } from '../../lambda/workspace/surface/app-views.js';
import type { WorkspaceServices } from '../../lambda/workspace/surface/services.js';

/** The one place the MCP Apps views meet the server (lambda/workspace/app-views.ts). */
const ctx = {} as ReadContext<WorkspaceServices>;
const agendaOf = (source: (file: string) => Promise<string>) => viewResources(source).find((r) => r.uri === 'ui://doers/agenda')!;

describe('the views as resources', () => {
  test("a view's HTML is read on its first read and kept for the instance: the next read reads nothing", async () => {
    // Arrange
    const asked: string[] = [];
    const agenda = agendaOf(async (file) => {
      asked.push(file);
      return '<!doctype html><title>agenda</title>';
    });

    // Act
    const first = await agenda.read('ui://doers/agenda', ctx);
    const second = await agenda.read('ui://doers/agenda', ctx);

    // Assert
    assert.deepEqual(asked, ['agenda.html']);
    assert.deepEqual(second, first);
    assert.equal(first[0]!.text, '<!doctype html><title>agenda</title>');
    assert.equal(first[0]!.mimeType, 'text/html;profile=mcp-app');
  });

  test('a failed read is not kept: the next read tries again', async () => {
    // Arrange
    let calls = 0;
    const agenda = agendaOf(async () => {
      calls++;
      if (calls === 1) throw new Error('ENOENT');
      return '<!doctype html>';
    });

    // Act
    const failed = await agenda.read('ui://doers/agenda', ctx).then(
      () => 'read',
      (err: Error) => err.message,
    );
    const retried = await agenda.read('ui://doers/agenda', ctx);

    // Assert
    assert.equal(failed, 'ENOENT');
    assert.equal(retried[0]!.text, '<!doctype html>');
    assert.equal(calls, 2);
  });
});

describe('the tools linked to their views', () => {
  test('the linked tools get both keys, keep what they had, and every other tool is left as it was', () => {
    // Arrange
    const tool = (name: string, meta?: Record<string, unknown>) =>
      ({ name, ...(meta ? { meta } : {}) }) as unknown as ToolDefinition<WorkspaceServices>;
    const me = tool('me_get');

    // Act
    const [agenda, board, other] = linkViews([tool('agenda_get', { kept: 1 }), tool('project_get'), me]);

    // Assert
    assert.deepEqual(agenda!.meta, { kept: 1, ui: { resourceUri: 'ui://doers/agenda' }, 'ui/resourceUri': 'ui://doers/agenda' });
    assert.deepEqual(board!.meta, { ui: { resourceUri: 'ui://doers/board' }, 'ui/resourceUri': 'ui://doers/board' });
    assert.equal(other, me);
  });
});
