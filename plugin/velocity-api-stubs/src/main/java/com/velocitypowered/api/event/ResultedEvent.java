package com.velocitypowered.api.event;

public interface ResultedEvent<R extends ResultedEvent.Result> {
    R getResult();

    void setResult(R result);

    interface Result {
        boolean isAllowed();
    }
}
