package com.velocitypowered.api.scheduler;

import java.util.concurrent.TimeUnit;

public interface Scheduler {
    TaskBuilder buildTask(Object plugin, Runnable runnable);

    interface TaskBuilder {
        TaskBuilder repeat(long time, TimeUnit unit);

        ScheduledTask schedule();
    }
}
