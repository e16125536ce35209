package io.papermc.paper.threadedregions.scheduler;

public interface ScheduledTask {
    CancelledState cancel();

    enum CancelledState {
        CANCELLED_BY_CALLER,
        CANCELLED_ALREADY,
        RUNNING,
        ALREADY_EXECUTED,
        NEXT_RUNS_CANCELLED,
        NEXT_RUNS_CANCELLED_ALREADY,
        IDLE
    }
}
