import { useEffect, useState } from "react";

/** Re-renders the caller once a minute so relative times ("5 min ago") stay fresh. */
export function useMinuteTick(): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = window.setInterval(() => setTick((n) => n + 1), 60_000);
    return () => window.clearInterval(timer);
  }, []);
  return tick;
}
