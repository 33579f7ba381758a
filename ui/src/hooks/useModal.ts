import { useEffect, type RefObject } from "react";
import { createFocusTrap } from "focus-trap";
import { closePopovers } from "./usePopover";
import { useLatest } from "./useLatest";

/**
 * Makes the element a modal for the keyboard: focus moves into it when it opens and cannot
 * leave it with Tab, Escape calls `onClose`, and focus returns to where it was when it closes.
 * `initial` names the element to focus first (a CSS selector inside it); else the first
 * focusable one, else the container itself.
 */
export function useModal(ref: RefObject<HTMLElement | null>, onClose: () => void, initial?: string): void {
  useDialogFocus(ref, onClose, { initial, trap: true });
}

/**
 * A side sheet beside the page (not modal): focus moves into it when it opens, Escape closes
 * it and focus returns to where it was, but Tab and the mouse may leave it.
 */
export function useSheet(ref: RefObject<HTMLElement | null>, onClose: () => void, initial?: string): void {
  useDialogFocus(ref, onClose, { initial, trap: false });
}

function useDialogFocus(
  ref: RefObject<HTMLElement | null>,
  onClose: () => void,
  { initial, trap: trapped }: { initial?: string; trap: boolean },
): void {
  const close = useLatest(onClose);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    closePopovers();
    if (!element.hasAttribute("tabindex")) element.setAttribute("tabindex", "-1");
    const trap = createFocusTrap(element, {
      initialFocus: () => (initial && element.querySelector<HTMLElement>(initial)) || undefined,
      fallbackFocus: element,
      escapeDeactivates: (event) => {
        event.preventDefault();
        close.current();
        return false;
      },
      // A click outside does not close a modal (its content may be half-typed), and is not
      // let through to the page behind it.
      clickOutsideDeactivates: false,
      allowOutsideClick: !trapped,
      returnFocusOnDeactivate: true,
      // jsdom has no layout: without this every element would count as hidden there.
      tabbableOptions: { displayCheck: "none" },
    });
    trap.activate();
    // A sheet lets focus go: the trap only moves focus in, answers Escape and gives focus back.
    if (!trapped) trap.pause();
    const onKey = (event: KeyboardEvent) => {
      if (!trapped && event.key === "Escape" && !event.defaultPrevented) {
        event.preventDefault();
        close.current();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      trap.deactivate();
    };
  }, [ref, initial, trapped, close]);
}
