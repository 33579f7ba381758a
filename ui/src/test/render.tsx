import { render } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { App } from "../App";

export function renderApp() {
  const user = userEvent.setup();
  const utils = render(<App />);
  return { user, ...utils };
}
