// The Events page's funnel builder: steps starting from a chosen event, POST /api/v1/funnels,
// and a bar per step. Loaded after events.js, whose helpers ($, el, api, problemText, showBox,
// handleFailure) it uses; events.js calls openFunnel when an event's name is clicked.
'use strict';

const MIN_STEPS = 2;
const MAX_STEPS = 10;
const DAY_MS = 86400000;

const oneDecimal = (n) => n.toFixed(1).replace(/\.0$/, '');
const percent = (ratio) => `${oneDecimal(ratio * 100)}%`;

function humanizeSeconds(seconds) {
  if (seconds == null) return '—';
  if (seconds < 1) return 'under 1 s';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${oneDecimal(seconds / 60)} min`;
  if (seconds < 86400) return `${oneDecimal(seconds / 3600)} h`;
  return `${oneDecimal(seconds / 86400)} d`;
}

/** A Date as a datetime-local value in local time. */
function toLocalInput(date) {
  return new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 19);
}

function openFunnel(name) {
  $('funnel').hidden = false;
  $('funnel-steps').replaceChildren();
  addStep(name);
  addStep('');
  if (!$('funnel-from').value) $('funnel-from').value = toLocalInput(new Date(Date.now() - 30 * DAY_MS));
  showBox('funnel-error', '');
  $('funnel-results').replaceChildren();
  $('funnel').scrollIntoView({ block: 'nearest' });
  $('funnel-steps').lastElementChild.querySelector('input').focus();
}

function addStep(value) {
  const steps = $('funnel-steps');
  if (steps.children.length >= MAX_STEPS) return;
  steps.append(el('li', { className: 'step', 'data-testid': 'funnel-step-row' },
    el('label', {}),
    el('input', { type: 'text', required: true, pattern: '[a-z0-9_]{1,64}', list: 'seen-names',
      spellcheck: 'false', 'data-testid': 'funnel-step', value }),
    el('button', { type: 'button', className: 'secondary remove-step',
      'data-testid': 'funnel-remove-step' }, 'Remove')));
  renumberSteps();
}

function renumberSteps() {
  const rows = [...$('funnel-steps').children];
  rows.forEach((row, index) => {
    const id = `funnel-step-${index + 1}`;
    const label = row.querySelector('label');
    label.textContent = index === 0 ? 'Step 1 (start)' : `Step ${index + 1}`;
    label.htmlFor = id;
    row.querySelector('input').id = id;
    const remove = row.querySelector('button');
    remove.setAttribute('aria-label', `Remove step ${index + 1}`);
    remove.hidden = index === 0; // the first step is the event the funnel starts from
    remove.disabled = rows.length <= MIN_STEPS;
  });
  $('funnel-add-step').disabled = rows.length >= MAX_STEPS;
}

async function runFunnel(event) {
  event.preventDefault();
  const body = {
    steps: [...$('funnel-steps').querySelectorAll('input')].map((input) => input.value.trim()),
    window_seconds: Math.round(Number($('funnel-window').value) * Number($('funnel-window-unit').value)),
    order: $('funnel-order').value,
  };
  const from = localToRfc3339($('funnel-from').value);
  if (from) body.from = from;
  const to = localToRfc3339($('funnel-to').value);
  if (to) body.to = to;
  showBox('funnel-error', '');
  $('funnel-results').replaceChildren();
  $('funnel-run').disabled = true;
  try {
    const response = await api('/api/v1/funnels', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    });
    if (!response.ok) {
      showBox('funnel-error', await problemText(response));
      return;
    }
    renderFunnel((await response.json()).steps);
  } catch (error) {
    handleFailure(error, 'funnel-error');
  } finally {
    $('funnel-run').disabled = false;
  }
}

function renderFunnel(steps) {
  const most = Math.max(1, ...steps.map((step) => step.players));
  $('funnel-results').replaceChildren(...steps.map((step, index) => {
    const bar = el('div', { className: 'bar' });
    bar.style.width = `${(step.players / most) * 100}%`; // CSSOM, which the CSP allows
    const stats = index === 0
      ? 'start of the funnel'
      : `${percent(step.conversion_from_start)} of start · ${percent(step.conversion_from_previous)}`
        + ` of previous · median ${humanizeSeconds(step.median_seconds_from_previous)} after previous`;
    return el('li', { className: 'funnel-step', 'data-testid': 'funnel-bar',
      'data-name': step.name, 'data-players': step.players },
    el('div', { className: 'funnel-label' },
      el('span', { className: 'funnel-name' }, `${index + 1}. ${step.name}`),
      el('span', { className: 'funnel-players', 'data-testid': 'funnel-players' },
        `${step.players} ${step.players === 1 ? 'player' : 'players'}`)),
    el('div', { className: 'bar-track', role: 'img',
      'aria-label': `${step.name}: ${step.players} players` }, bar),
    el('div', { className: 'funnel-stats muted', 'data-testid': 'funnel-stats' }, stats));
  }));
}

document.addEventListener('DOMContentLoaded', () => {
  $('funnel-add-step').addEventListener('click', () => {
    addStep('');
    $('funnel-steps').lastElementChild.querySelector('input').focus();
  });
  $('funnel-steps').addEventListener('click', (event) => {
    const remove = event.target.closest('.remove-step');
    if (!remove || remove.disabled) return;
    remove.closest('li').remove();
    renumberSteps();
  });
  $('funnel-form').addEventListener('submit', runFunnel);
  $('funnel-close').addEventListener('click', () => { $('funnel').hidden = true; });
});
