package com.velocitypowered.api.command;

import com.velocitypowered.api.permission.PermissionSubject;
import net.kyori.adventure.audience.Audience;

public interface CommandSource extends Audience, PermissionSubject {}
