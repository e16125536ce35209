package com.velocitypowered.api.scheduler;

public interface ScheduledTask {
    Object plugin();

    void cancel();
}
