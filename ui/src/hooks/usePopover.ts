import { useEffect, useRef, useState, type RefObject } from "react";

/** Other popovers close when one opens, and every popover closes when a modal opens. */
const OPENED = "decima:popover-opened";

/** Closes every open popover: called when a modal opens over them. */
export function closePopovers(): void {
  document.dispatchEvent(new CustomEvent(OPENED, { detail: null }));
}

/**
 * A popover's open state: it closes on Escape (focus back on its trigger), on a press outside
 * it, when another popover opens, and when a modal opens.
 */
export function usePopover(): {
  open: boolean;
  setOpen: (open: boolean) => void;
  toggle: () => void;
  container: RefObject<HTMLDivElement | null>;
  trigger: RefObject<HTMLButtonElement | null>;
} {
  const [open, setOpenState] = useState(false);
  const container = useRef<HTMLDivElement | null>(null);
  const trigger = useRef<HTMLButtonElement | null>(null);
  const self = useRef(Symbol("popover"));
  const setOpen = (next: boolean) => {
    if (next) document.dispatchEvent(new CustomEvent(OPENED, { detail: self.current }));
    setOpenState(next);
  };
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      event.stopPropagation();
      setOpenState(false);
      trigger.current?.focus();
    };
    const onPointer = (event: PointerEvent | MouseEvent) => {
      if (container.current && !container.current.contains(event.target as Node)) setOpenState(false);
    };
    const onOther = (event: Event) => {
      if ((event as CustomEvent).detail !== self.current) setOpenState(false);
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("mousedown", onPointer);
    document.addEventListener(OPENED, onOther);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("mousedown", onPointer);
      document.removeEventListener(OPENED, onOther);
    };
  }, [open]);
  return { open, setOpen, toggle: () => setOpen(!open), container, trigger };
}
