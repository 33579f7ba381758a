import type { ReactNode } from "react";

type Props = { testId: string; children: ReactNode };

export function EmptyState({ testId, children }: Props) {
  return (
    <div className="empty-state" data-testid={testId}>
      {children}
    </div>
  );
}
