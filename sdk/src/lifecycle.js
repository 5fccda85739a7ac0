// lifecycle.js — the document's back/forward cache life, as the connection must follow it.
//
// Owns: `followHistoryCache({win, transport})`: when the document is put into the back/forward
// cache (`pagehide` with `persisted`), the transport lets go of its socket, so the tab's newer
// document gets the session; when it is shown from the cache again (`pageshow` with
// `persisted`), the transport reconnects and this document takes the session back.
// Must not: act on a pagehide that unloads the document for good (the browser closes the socket
// itself), or throw into the page's event dispatch.

/**
 * @param {object} o
 * @param {any} o.win
 * @param {{suspend: () => void, resume: () => void}} o.transport
 * @returns {() => void} stops following
 */
export function followHistoryCache({ win, transport }) {
  const onPageHide = (ev) => {
    if (!ev || ev.persisted !== true) return;
    try {
      transport.suspend();
    } catch {
      // the page's own pagehide handlers must still run
    }
  };
  const onPageShow = (ev) => {
    if (!ev || ev.persisted !== true) return;
    try {
      transport.resume();
    } catch {
      // as above
    }
  };
  win.addEventListener('pagehide', onPageHide);
  win.addEventListener('pageshow', onPageShow);
  return function stop() {
    win.removeEventListener('pagehide', onPageHide);
    win.removeEventListener('pageshow', onPageShow);
  };
}
