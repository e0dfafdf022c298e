import * as z from 'zod/mini';
import { definePrompt, userText } from '../../mcp/prompt-registry.js';

/**
 * One user message each, chaining this server's own tools. `tools` decides visibility: a prompt is
 * listed only where the token may call every tool it needs and the connection lists them (its tool
 * groups); a tool a prompt can do without (activity_list, project_get) it asks for only "if you can".
 * The lists of tasks are chosen with tasks_search's query language.
 */
const REPORT_ONLY =
  'Report only what the tools returned: do not invent tasks, dates, people or numbers, and say so plainly when a tool ' +
  'returned nothing or refused. Quote task ids in brackets so I can refer to them.';

export const dailyBriefing = definePrompt({
  name: 'daily_briefing',
  title: 'Daily briefing',
  description:
    "A briefing on the user's day: their inbox, overdue and due-today tasks by priority, what is coming next, and what others changed on them.",
  args: z.object({}),
  tools: ['me_get', 'agenda_get', 'tasks_search'],
  messages: () =>
    userText(
      'Brief me on my day in the doers workspace.\n' +
        "1. Call me_get to learn my name, time zone, today's date and how many inbox entries are unread; if any are and you can " +
        'call inbox_list, call it with unread true and start the briefing with them (who assigned, mentioned or changed what, ' +
        'and my reminders).\n' +
        '2. Call agenda_get (assignee "me") for today\'s counts and the overdue and due-today tasks.\n' +
        '3. Call tasks_search with query "assignee:me due>today due<=+7d" for what comes next.\n' +
        "4. If you can call activity_list, call it with since yesterday's date for what changed in the last day; else call " +
        'tasks_search with query "assignee:me updated>=-1d" for my tasks changed since yesterday.\n' +
        'Then give me a short briefing: first the counts, then what is overdue, then what is due today in priority order, then the ' +
        'next few days; a task whose line names a status ("In progress", "In review") is under way, one without it not started. ' +
        'Then, in one or two lines, what other people changed on my tasks since yesterday (who, through which ' +
        'assistant, what) from step 4; leave out my own changes. A recurring task (↻) stays open when done: its completions ' +
        'are the "done for" lines of step 4. Suggest at most three things to do first.\n' +
        REPORT_ONLY,
    ),
});

export const weeklyReview = definePrompt({
  name: 'weekly_review',
  title: 'Weekly review',
  description: 'Reviews the past week and the coming one: what got done, what slipped, what is due, per project.',
  args: z.object({}),
  tools: ['me_get', 'tasks_search', 'projects_list'],
  messages: () =>
    userText(
      'Run my weekly review of the doers workspace.\n' +
        "1. Call me_get for today's date in my time zone.\n" +
        '2. Call projects_list for the active projects.\n' +
        '3. Call tasks_search with query "assignee:me completed>=-7d" to see what I finished in the last seven days.\n' +
        '4. Call tasks_search with query "assignee:me is:overdue" for what slipped.\n' +
        '5. Call tasks_search with query "assignee:me due>today due<=+7d" for the week ahead.\n' +
        '6. Call tasks_search with query "assignee:me is:recurring due<=+7d" for what repeats next week ' +
        '(each line shows its rule after ↻; a recurring task stays open when done, so it is never in step 3).\n' +
        'Summarise: done last week, overdue now, due next week, what repeats next week (with its rule), grouped by project (or ' +
        '"no project"), a subtask ("sub of DEMO-12" on its line) under its parent. End with up to three ' +
        'suggestions (reschedule, delegate, drop).\n' +
        REPORT_ONLY,
    ),
});

export const triageInbox = definePrompt({
  name: 'triage_inbox',
  title: 'Triage the inbox',
  description:
    'Goes through open tasks that are in no project and proposes a project, priority and due date for each; changes only what the user confirms.',
  args: z.object({}),
  tools: ['me_get', 'tasks_search', 'projects_list', 'task_update'],
  messages: () =>
    userText(
      'Help me triage the inbox of the doers workspace: the open tasks that belong to no project.\n' +
        "1. Call me_get for today's date and my time zone.\n" +
        '2. Call tasks_search with query "no:project" for the inbox, and projects_list for the projects there are.\n' +
        '3. For each inbox task, propose a project, a priority (P1 to P4) and, where it needs one, a due date, with one line of ' +
        'reason; one nobody will do, propose to cancel (status "Canceled"), not to delete.\n' +
        'Show me the proposals as a list and wait. Only after I confirm, call task_update for the confirmed tasks, each with the ' +
        'version tasks_search returned; if one is refused as a conflict, tell me and leave it.\n' +
        REPORT_ONLY,
    ),
});

export const catchUpOn = definePrompt({
  name: 'catch_up_on',
  title: 'Catch up on a project',
  description:
    'Catches the user up on one project: its state, open and overdue tasks, recent completions, what changed this week and the latest discussion.',
  args: z.object({ project: z.string().check(z.minLength(1), z.describe('The project name or projectId')) }),
  tools: ['projects_list', 'tasks_search', 'comments_list'],
  messages: ({ project }) =>
    userText(
      `Catch me up on the project "${project}" in the doers workspace.\n` +
        '1. Find it: call projects_list (includeArchived true) and match the name, or use it directly if it is an id. ' +
        'If nothing matches, say so and stop. If you can call project_get, call it for its description and counts.\n' +
        '2. Call tasks_search with query \'project:"<its name>"\' for the open tasks (add status:started for what is under way), ' +
        'and with \'project:"<its name>" completed>=-14d\' for the recently completed ones.\n' +
        '3. For the two or three most urgent open tasks, call comments_list to see the latest discussion.\n' +
        '4. If you can call activity_list, call it with that project and since seven days ago for what changed recently, and ' +
        'who changed it; else call tasks_search with \'project:"<its name>" updated>=-7d\'.\n' +
        'Summarise where the project stands, what is overdue or blocked, who is on what, what changed this week (and who changed ' +
        'it), and what was decided recently.\n' +
        REPORT_ONLY,
    ),
});

export const WORKSPACE_PROMPTS = [dailyBriefing, weeklyReview, triageInbox, catchUpOn];
