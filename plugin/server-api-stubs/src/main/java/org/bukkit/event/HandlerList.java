package org.bukkit.event;

public class HandlerList {
    public HandlerList() {}
}
