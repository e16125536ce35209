package com.velocitypowered.api.permission;

public interface PermissionSubject {
    default boolean hasPermission(String permission) {
        return getPermissionValue(permission).asBoolean();
    }

    Tristate getPermissionValue(String permission);
}
