import "@testing-library/jest-dom/vitest";
import { clearMocks } from "@tauri-apps/api/mocks";
import { cleanup, configure } from "@testing-library/react";
import { afterEach, beforeEach } from "vitest";
import i18n from "../i18n";

// What the page renders after a lazy chunk loads (the markdown renderer, a dialog) can take
// more than testing-library's default second on a loaded 2-core machine, where a test then
// failed with the element about to appear. Waiting longer changes no assertion.
configure({ asyncUtilTimeout: 5000 });

beforeEach(async () => {
  window.localStorage.clear();
  await i18n.changeLanguage("en");
});

afterEach(() => {
  cleanup();
  clearMocks();
});

// jsdom lays nothing out, so every element measures 0 px and a virtualized list would show no
// rows. Give the message list's viewport and its rows a size, as a browser would: a 600 px
// viewport (read through clientHeight) and 60 px rows (read through offsetHeight). The
// end-to-end tests in WebKit cover real layout.
const sizes: Record<string, (el: HTMLElement) => number> = {
  clientHeight: (el) => (el.classList.contains("message-scroll") ? 600 : 0),
  clientWidth: (el) => (el.classList.contains("message-scroll") ? 800 : 0),
  offsetHeight: (el) => (el.classList.contains("list-row") ? 60 : 0),
  offsetWidth: (el) => (el.classList.contains("list-row") ? 800 : 0),
};
// The viewport's content is as tall as the list the virtualizer sized.
sizes.scrollHeight = (el) => {
  if (!el.classList.contains("message-scroll")) return 0;
  const list = el.querySelector<HTMLElement>(".message-list");
  return list ? parseFloat(list.style.height) || 0 : 0;
};
for (const [name, size] of Object.entries(sizes)) {
  Object.defineProperty(HTMLElement.prototype, name, {
    configurable: true,
    get(this: HTMLElement) {
      return size(this);
    },
  });
}
// jsdom has no Element.scrollTo; a browser moves the element and fires "scroll".
HTMLElement.prototype.scrollTo = function (this: HTMLElement, options?: ScrollToOptions | number) {
  const top = typeof options === "number" ? options : options?.top;
  if (top === undefined) return;
  this.scrollTop = Math.max(0, Math.min(top, this.scrollHeight - this.clientHeight));
  this.dispatchEvent(new Event("scroll"));
} as typeof HTMLElement.prototype.scrollTo;
