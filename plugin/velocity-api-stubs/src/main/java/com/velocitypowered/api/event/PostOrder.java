package com.velocitypowered.api.event;

public enum PostOrder {
    FIRST, EARLY, NORMAL, LATE, LAST, CUSTOM
}
