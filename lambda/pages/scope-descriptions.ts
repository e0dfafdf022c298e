/** What each scope lets an assistant do, in the words the consent and account pages use. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  'tasks:read': 'Read tasks, projects, comments and agendas',
  'tasks:write': 'Create, change, complete and delete tasks, projects and comments',
  'team:read': 'See the members of the workspace',
  'team:admin': 'Invite members and change their roles',
};
