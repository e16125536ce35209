// The header of every signed-in page, enhanced (everything works without this file):
// - the bar's drop-downs: opening one closes the others; a click elsewhere or Escape closes it;
// - the player search: "/" focuses it (unless you are typing in a field); its suggestions (htmx
//   swaps them into #player-suggestions) are a listbox: the arrow keys move through them, Enter
//   opens the one chosen (else the form is sent), Escape closes them.
(function () {
  'use strict';

  const groups = () => Array.from(document.querySelectorAll('.site-nav .nav-group > details'));
  const menu = document.querySelector('.site-nav .menu');

  function closeGroups(except) {
    for (const group of groups()) {
      if (group !== except) group.open = false;
    }
  }

  // A summary's state, said in ARIA too (browsers expose it natively; some readers want the
  // attribute).
  for (const details of document.querySelectorAll('.site-nav details')) {
    const summary = details.querySelector(':scope > summary');
    const sync = () => summary.setAttribute('aria-expanded', details.open ? 'true' : 'false');
    sync();
    details.addEventListener('toggle', sync);
  }

  for (const group of groups()) {
    group.addEventListener('toggle', () => {
      if (group.open && !isPhone()) closeGroups(group);
    });
  }

  // Without ::details-content a closed menu hides the bar: on a wide screen, open it.
  if (menu && !isPhone() && !CSS.supports('selector(::details-content)')) menu.open = true;

  // The phone's menu opens with the section of the page shown already open.
  if (menu) {
    menu.addEventListener('toggle', () => {
      if (!menu.open) return;
      const current = menu.querySelector('.nav-group summary[aria-current="true"]');
      if (current) current.parentElement.open = true;
    });
  }

  function isPhone() {
    return window.matchMedia('(max-width: 60rem)').matches;
  }

  document.addEventListener('click', (event) => {
    if (!event.target.closest('.site-nav')) {
      closeGroups(null);
      if (menu) menu.open = false;
    } else if (!isPhone() && !event.target.closest('.nav-group')) {
      closeGroups(null);
    }
  });

  const input = document.getElementById('player-find-q');
  const box = document.getElementById('player-suggestions');

  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      const open = groups().find((group) => group.open);
      if (open && !isPhone()) {
        open.open = false;
        open.querySelector('summary').focus();
        return;
      }
      if (menu && menu.open && isPhone()) {
        menu.open = false;
        menu.querySelector('summary').focus();
        return;
      }
    }
    if (event.key !== '/' || !input || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing = target.closest && target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]');
    if (typing) return;
    event.preventDefault();
    input.focus();
    input.select();
  });

  if (!input || !box) return;

  const options = () => Array.from(box.querySelectorAll('[role="option"]'));

  function active() {
    const id = input.getAttribute('aria-activedescendant');
    return id ? document.getElementById(id) : null;
  }

  function choose(option) {
    for (const other of options()) other.setAttribute('aria-selected', other === option ? 'true' : 'false');
    if (option) {
      input.setAttribute('aria-activedescendant', option.id);
      option.scrollIntoView({ block: 'nearest' });
    } else {
      input.removeAttribute('aria-activedescendant');
    }
  }

  function close() {
    box.replaceChildren();
    input.removeAttribute('aria-activedescendant');
    input.setAttribute('aria-expanded', 'false');
  }

  // Once the form is sent, the page is leaving: no more suggestions are asked for.
  let leaving = false;
  input.form.addEventListener('submit', () => { leaving = true; });
  input.addEventListener('htmx:beforeRequest', (event) => {
    if (leaving) event.preventDefault();
  });

  // After each swap: expanded when there is a list, nothing chosen yet.
  box.addEventListener('htmx:afterSwap', () => {
    input.removeAttribute('aria-activedescendant');
    input.setAttribute('aria-expanded', options().length > 0 ? 'true' : 'false');
  });

  // Under two characters there is nothing to suggest: no request needed to clear the list.
  input.addEventListener('input', () => {
    if (input.value.trim().length < 2) close();
  });

  input.addEventListener('keydown', (event) => {
    const list = options();
    const current = active();
    const at = current ? list.indexOf(current) : -1;
    if (event.key === 'ArrowDown' && list.length > 0) {
      event.preventDefault();
      choose(list[(at + 1) % list.length]);
    } else if (event.key === 'ArrowUp' && list.length > 0) {
      event.preventDefault();
      choose(list[at <= 0 ? list.length - 1 : at - 1]);
    } else if (event.key === 'Enter' && current) {
      event.preventDefault();
      window.location.assign(current.dataset.href);
    } else if (event.key === 'Escape' && box.childElementCount > 0) {
      event.preventDefault();
      event.stopPropagation();
      close();
    }
  });

  box.addEventListener('click', (event) => {
    const option = event.target.closest('[role="option"]');
    if (option) window.location.assign(option.dataset.href);
  });

  document.addEventListener('click', (event) => {
    if (!event.target.closest('.player-find')) close();
  });
})();
