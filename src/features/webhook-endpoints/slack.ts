// Slack's incoming-webhook message for an event (https://api.slack.com/messaging/webhooks):
// `text` is the notification fallback, `blocks` the message: the headline, the numbers a person
// acts on (effect with its interval, chance to beat control), and a link to the experiment.
import type { EventSummary } from './publish.js';

/** Slack's limit on a section's text is 3000 characters; keep well under it. */
const MAX_TEXT = 2900;

function clip(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

/** Escapes the three characters Slack's mrkdwn gives meaning to. */
function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function slackMessage(summary: EventSummary): Record<string, unknown> {
  const blocks: Array<Record<string, unknown>> = [{ type: 'section', text: { type: 'mrkdwn', text: clip(`*${escape(summary.headline)}*`) } }];
  if (summary.fields.length > 0) {
    blocks.push({
      type: 'section',
      fields: summary.fields.slice(0, 10).map((field) => ({ type: 'mrkdwn', text: clip(`*${escape(field.label)}*\n${escape(field.value)}`) })),
    });
  }
  if (summary.link) {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `<${summary.link}|Open in Verdict>` }] });
  }
  return { text: summary.link ? `${summary.headline} ${summary.link}` : summary.headline, blocks };
}
