import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "./i18n";
import "./styles/base.css";
import "./styles/layout.css";
import "./styles/sidebar.css";
import "./styles/messages.css";
import "./styles/workbench.css";
import "./styles/settings.css";
import "./styles/panels.css";
import "highlight.js/styles/github.css";
import { App } from "./App";
import { reportFirstPaint } from "./lib/startup";
import { applyTheme, savedTheme } from "./lib/theme";

applyTheme(savedTheme());

const root = document.getElementById("root");
if (!root) throw new Error("#root element missing from index.html");

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

declare global {
  interface Window {
    /** When the workbench's first frame was painted (ms since the epoch): the figures read it. */
    __decimaFirstRender?: number;
  }
}
// After React's first commit (a task), the next frame is the workbench's first on screen; a
// task after that frame, its paint is recorded, and the app logs both against its launch.
setTimeout(() =>
  requestAnimationFrame(() => {
    const firstFrame = performance.timeOrigin + performance.now();
    window.__decimaFirstRender ??= firstFrame;
    setTimeout(() => {
      void reportFirstPaint(firstFrame);
      // The Markdown renderer is its own chunk, kept out of the first paint; loaded now, the
      // first conversation opened shows its answers rendered, not as written while it loads.
      void import("./components/MarkdownText");
    });
  }),
);
