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
import { applyTheme, savedTheme } from "./lib/theme";

applyTheme(savedTheme());

const root = document.getElementById("root");
if (!root) throw new Error("#root element missing from index.html");

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
