package com.velocitypowered.api.permission;

public enum Tristate {
    TRUE(true),
    FALSE(false),
    UNDEFINED(false);

    private final boolean booleanValue;

    Tristate(boolean booleanValue) {
        this.booleanValue = booleanValue;
    }

    public boolean asBoolean() {
        return this.booleanValue;
    }
}
